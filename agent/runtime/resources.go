package runtime

import (
	"context"
	"fmt"

	containerd "github.com/containerd/containerd/v2/client"
)

// UpdateContainerResources writes res into the running task's cgroup (runc
// update through the shim), as containerd's CRI UpdateContainerResources
// does, so the container keeps running with its new limits. The stored
// spec is left alone: a restart creates a new container from the pod's
// spec.
func (r *Containerd) UpdateContainerResources(ctx context.Context, id string, res Resources) error {
	ctx = r.nsCtx(ctx)
	c, err := r.load(ctx, id)
	if err != nil {
		return err
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		return fmt.Errorf("update resources of %s: load task: %w", id, err)
	}
	if err := task.Update(ctx, containerd.WithResources(linuxResources(res))); err != nil {
		return fmt.Errorf("update resources of %s: %w", id, err)
	}
	return nil
}

// UpdateContainerResources records the new resources in the container's
// spec (Spec shows them) and the call as "update <id>".
func (f *Fake) UpdateContainerResources(_ context.Context, id string, res Resources) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("update", id)
	c, err := f.get(id)
	if err != nil {
		return err
	}
	if c.status.State != StateRunning {
		return fmt.Errorf("update %s: state is %s", id, c.status.State)
	}
	c.spec.Resources = res
	return nil
}
