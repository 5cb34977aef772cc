package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
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
	mu          sync.Mutex
	ids         []string // guarded by mu
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
	return b.startID(fmt.Sprintf("base-%03d", i))
}

func (b *baseline) startID(id string) (time.Duration, error) {
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
	b.mu.Lock()
	b.ids = append(b.ids, id)
	b.mu.Unlock()
	task, err := c.NewTask(b.ctx, cio.NullIO)
	if err != nil {
		return 0, fmt.Errorf("new task %s: %w", id, err)
	}
	if err := task.Start(b.ctx); err != nil {
		return 0, fmt.Errorf("start task %s: %w", id, err)
	}
	return time.Since(t0), nil
}

// burst starts n containers at once (a goroutine each), times them until
// the last one started, then removes them: the raw containerd floor of
// the orch burst of as many pods.
func (b *baseline) burst(n int) (time.Duration, error) {
	ids := make([]string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range ids {
		ids[i] = fmt.Sprintf("base-burst%d-%03d", n, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.startID(ids[i])
			errs <- err
		}()
	}
	wg.Wait()
	d := time.Since(t0)
	close(errs)
	var first error
	for err := range errs {
		first = cmp.Or(first, err)
	}
	b.remove(ids)
	return d, first
}

// remove kills and deletes the containers ids (and their snapshots).
func (b *baseline) remove(ids []string) {
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	for _, id := range ids {
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
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ids = slices.DeleteFunc(b.ids, func(id string) bool { return slices.Contains(ids, id) })
}

// cleanup kills and deletes the baseline's tasks, containers, snapshots
// and image, then its namespace. Errors are logged; the host sweep follows.
func (b *baseline) cleanup() {
	if b == nil || b.client == nil {
		return
	}
	b.mu.Lock()
	ids := slices.Clone(b.ids)
	b.mu.Unlock()
	b.remove(ids)
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
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
