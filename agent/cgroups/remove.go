package cgroups

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"
)

// RemovePod removes the pod's cgroup (in whichever tier it is) with every
// directory below it, in every hierarchy. It kills nothing: the runtime stops
// the containers first; while tasks drain it retries with backoff until
// Config.RemoveTimeout or ctx ends (then ErrBusy). A pod without a cgroup is
// success.
func (m *Manager) RemovePod(ctx context.Context, uid types.UID) error {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.RemoveTimeout)
	defer cancel()
	for _, class := range classes {
		group := m.PodPath(class, uid)
		if err := m.removeGroup(ctx, group); err != nil {
			return fmt.Errorf("remove pod %s cgroup: %w", uid, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, class := range classes {
		delete(m.written, m.PodPath(class, uid))
	}
	return m.setBurstable(uid, -1)
}

func (m *Manager) removeGroup(ctx context.Context, group string) error {
	delay := 10 * time.Millisecond
	for {
		err := m.be.remove(group)
		if err == nil || !errors.Is(err, ErrBusy) {
			return err
		}
		m.log.Debug("cgroup busy, waiting for tasks to exit", zap.String("cgroup", group))
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%v)", err, ctx.Err())
		case <-time.After(delay):
		}
		if delay < 500*time.Millisecond {
			delay *= 2
		}
	}
}

// PodCgroups lists the UIDs of the pods that have a cgroup under any tier
// (in any hierarchy), for garbage collection of pods that no longer exist.
func (m *Manager) PodCgroups() ([]types.UID, error) {
	seen := map[types.UID]bool{}
	var out []types.UID
	for _, class := range classes {
		names, err := m.be.children(m.TierPath(class))
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if uid, ok := uidFromDir(n); ok && !seen[uid] {
				seen[uid] = true
				out = append(out, uid)
			}
		}
	}
	return out, nil
}

// AddProc moves a process into a cgroup given by its absolute path (a pod
// cgroup or ContainerCgroupsPath). The runtime normally does this itself.
func (m *Manager) AddProc(cgroupPath string, pid int) error {
	return m.be.addProc(cgroupPath, pid)
}

// Procs lists the pids directly in a cgroup given by its absolute path.
func (m *Manager) Procs(cgroupPath string) ([]int, error) {
	return m.be.procs(cgroupPath)
}

// Dir is the host directory of a cgroup path in a controller's hierarchy
// (v1: /sys/fs/cgroup/<controller>/<path>; v2: the unified directory).
func (m *Manager) Dir(controller, cgroupPath string) string {
	return m.be.dir(controller, cgroupPath)
}
