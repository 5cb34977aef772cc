package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"
	"go.uber.org/zap"
)

// killWait is how long StopContainer waits for a SIGKILLed task to exit.
const killWait = 10 * time.Second

// StopContainer sends SIGTERM, waits up to grace, then SIGKILLs and waits
// for the exit. A container without a running task is already stopped.
func (r *Containerd) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	ctx = r.nsCtx(ctx)
	c, err := r.load(ctx, id)
	if err != nil {
		return err
	}
	task, err := c.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stop %s: load task: %w", id, err)
	}
	st, err := task.Status(ctx)
	if err != nil {
		return fmt.Errorf("stop %s: task status: %w", id, err)
	}
	if st.Status == containerd.Stopped {
		return nil
	}
	waitCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	exitCh, err := task.Wait(waitCtx)
	if err != nil {
		return fmt.Errorf("stop %s: wait: %w", id, err)
	}
	if grace > 0 {
		if err := task.Kill(ctx, syscall.SIGTERM); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("stop %s: SIGTERM: %w", id, err)
		}
		select {
		case <-exitCh:
			return nil
		case <-time.After(grace):
		case <-ctx.Done():
		}
	}
	if err := task.Kill(context.WithoutCancel(ctx), syscall.SIGKILL, containerd.WithKillAll); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("stop %s: SIGKILL: %w", id, err)
	}
	select {
	case <-exitCh:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("stop %s: task did not exit %s after SIGKILL", id, killWait)
	}
}

// RemoveContainer kills and deletes the task, then the container with its
// snapshot, and the container's FIFOs. A missing container is success.
func (r *Containerd) RemoveContainer(ctx context.Context, id string) error {
	ctx = r.nsCtx(ctx)
	c, err := r.load(ctx, id)
	if errors.Is(err, ErrNotFound) {
		r.forget(id)
		return nil
	}
	if err != nil {
		return err
	}
	if task, err := c.Task(ctx, nil); err == nil {
		if _, err := task.Delete(ctx, containerd.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("remove %s: delete task: %w", id, err)
		}
	} else if !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove %s: load task: %w", id, err)
	}
	if err := c.Delete(ctx, containerd.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove %s: delete container: %w", id, err)
	}
	r.forget(id)
	return nil
}

func (r *Containerd) forget(id string) {
	r.mu.Lock()
	x, ok := r.ios[id]
	delete(r.ios, id)
	delete(r.execs, id)
	r.mu.Unlock()
	r.groups.release(id)
	if ok {
		x.stop()
	}
	_ = os.RemoveAll(r.fifoDir(id))
}

// Recover reopens the stdio FIFOs of tasks created by an earlier agent
// (they are still in FIFODir), so output keeps reaching the log files and
// the containers stay attachable, and learns the shim groups they are in.
func (r *Containerd) Recover(ctx context.Context) error {
	ctx = r.nsCtx(ctx)
	cs, err := r.client.Containers(ctx, fmt.Sprintf("labels.%q", LabelPodUID))
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	for _, c := range cs {
		r.restoreGroup(ctx, c)
		r.mu.Lock()
		_, tracked := r.ios[c.ID()]
		r.mu.Unlock()
		if tracked {
			continue
		}
		if err := r.reattach(ctx, c); err != nil {
			r.log.Warn("reattach container logs", zap.String("id", c.ID()), zap.Error(err))
		}
	}
	return nil
}

// restoreGroup records an existing container's shim group (containers
// made before groups were labelled are in their pod's group).
func (r *Containerd) restoreGroup(ctx context.Context, c containerd.Container) {
	info, err := c.Info(ctx, containerd.WithoutRefreshedMetadata)
	if err != nil {
		return
	}
	pod := info.Labels[LabelPodUID]
	group := info.Labels[LabelShimGroup]
	if group == "" {
		group = pod
	}
	r.groups.restore(pod, c.ID(), group)
}

func (r *Containerd) reattach(ctx context.Context, c containerd.Container) error {
	labels, err := c.Labels(ctx)
	if err != nil {
		return err
	}
	task, err := c.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := task.Status(ctx)
	if err != nil || st.Status == containerd.Stopped {
		return err
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return err
	}
	streams, err := r.openLog(c.ID(), labels[LabelLogPath])
	if err != nil {
		return err
	}
	x := newCtrIO(streams, labels[LabelStdin], spec.Process != nil && spec.Process.Terminal)
	task, err = c.Task(ctx, x.attach())
	if err != nil {
		x.finish()
		return err
	}
	x.io = task.IO()
	r.track(c.ID(), x)
	r.log.Info("reattached container logs", zap.String("id", c.ID()), zap.String("name", labels[LabelContainer]))
	return nil
}
