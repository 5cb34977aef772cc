package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	"go.uber.org/zap"

	orchrt "github.com/orch/orch/agent/runtime"
)

// baseline creates and starts containers of the same image directly with
// the containerd v2 client, against the agent's managed containerd, in its
// own containerd namespace and cgroup root.
type baseline struct {
	log         *zap.Logger
	client      *containerd.Client
	ctx         context.Context // carries the baseline namespace
	img         containerd.Image
	snapshotter string
	cgroupRoot  string
	ids         []string
}

func newBaseline(ctx context.Context, log *zap.Logger, sock, ns, cgroupRoot, imageTar string) (*baseline, error) {
	client, err := containerd.New(sock)
	if err != nil {
		return nil, fmt.Errorf("connect containerd %s: %w", sock, err)
	}
	b := &baseline{log: log, client: client, ctx: namespaces.WithNamespace(ctx, ns), cgroupRoot: cgroupRoot}
	b.snapshotter = orchrt.PickSnapshotter(b.ctx, client)
	f, err := os.Open(imageTar)
	if err != nil {
		return b, err
	}
	defer f.Close()
	imgs, err := client.Import(b.ctx, f)
	if err != nil {
		return b, fmt.Errorf("import %s: %w", imageTar, err)
	}
	if len(imgs) == 0 {
		return b, errors.New("import: no image in the tarball")
	}
	b.img = containerd.NewImage(client, imgs[0])
	if err := b.img.Unpack(b.ctx, b.snapshotter); err != nil {
		return b, fmt.Errorf("unpack: %w", err)
	}
	return b, nil
}

// start times NewContainer (new snapshot, OCI spec from the image config,
// runc v2 shim) + NewTask (no stdio) + Start for one container.
func (b *baseline) start(i int) (time.Duration, error) {
	id := fmt.Sprintf("base-%03d", i)
	t0 := time.Now()
	c, err := b.client.NewContainer(b.ctx, id,
		containerd.WithImage(b.img),
		containerd.WithSnapshotter(b.snapshotter),
		containerd.WithNewSnapshot(id, b.img),
		containerd.WithRuntime("io.containerd.runc.v2", nil),
		containerd.WithNewSpec(oci.WithImageConfig(b.img), oci.WithProcessArgs("sleep", "3600"),
			oci.WithCgroup("/"+b.cgroupRoot+"/"+id)),
	)
	if err != nil {
		return 0, fmt.Errorf("new container %s: %w", id, err)
	}
	b.ids = append(b.ids, id)
	task, err := c.NewTask(b.ctx, cio.NullIO)
	if err != nil {
		return 0, fmt.Errorf("new task %s: %w", id, err)
	}
	if err := task.Start(b.ctx); err != nil {
		return 0, fmt.Errorf("start task %s: %w", id, err)
	}
	return time.Since(t0), nil
}

// cleanup kills and deletes the baseline's tasks, containers, snapshots
// and image, then its namespace. Errors are logged; the host sweep follows.
func (b *baseline) cleanup() {
	if b == nil || b.client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	for _, id := range b.ids {
		c, err := b.client.LoadContainer(ctx, id)
		if err != nil {
			continue
		}
		if task, err := c.Task(ctx, nil); err == nil {
			if _, err := task.Delete(ctx, containerd.WithProcessKill); err != nil {
				b.log.Warn("baseline task delete", zap.String("id", id), zap.Error(err))
			}
		}
		if err := c.Delete(ctx, containerd.WithSnapshotCleanup); err != nil {
			b.log.Warn("baseline container delete", zap.String("id", id), zap.Error(err))
		}
	}
	if b.img != nil {
		// Synchronous: containerd's GC removes the content and the unpacked
		// snapshots before the call returns, so the namespace is empty.
		if err := b.client.ImageService().Delete(ctx, b.img.Name(), images.SynchronousDelete()); err != nil {
			b.log.Warn("baseline image delete", zap.Error(err))
		}
	}
	if ns, ok := namespaces.Namespace(ctx); ok {
		if err := b.client.NamespaceService().Delete(ctx, ns); err != nil {
			// The host sweep removes containerd's whole root anyway.
			b.log.Info("baseline namespace not deleted", zap.Error(err))
		}
	}
	_ = b.client.Close()
}
