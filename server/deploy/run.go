package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
	"k8s.io/client-go/util/workqueue"
)

// resyncKey is the queue key of a full pass: every file in the directory
// and every file a record names (files deleted while orch was down).
const resyncKey = ""

// Run watches the directory with inotify and reconciles until ctx ends.
// It is level-based: each start (each time this server becomes leader)
// reconciles every file.
func (c *Controller) Run(ctx context.Context) error {
	if err := os.MkdirAll(c.dir.Path, 0o700); err != nil {
		return fmt.Errorf("manifests dir: %w", err)
	}
	q := workqueue.NewTypedRateLimitingQueue[string](
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 30*time.Second))
	defer q.ShutDown()
	stopWatch, err := c.watch(ctx, q)
	if err != nil {
		// Out of inotify instances or watches: read the directory
		// periodically instead of not at all.
		c.log.Warn("cannot watch manifests dir; re-reading it every 30s instead", zap.Error(err))
		stopWatch = c.poll(ctx, q, 30*time.Second)
	}
	defer stopWatch()
	q.Add(resyncKey)
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	for c.processNext(ctx, q) {
	}
	return nil
}

func (c *Controller) processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	var err error
	if key == resyncKey {
		err = c.resync(ctx, q)
	} else {
		err = c.sync(ctx, key)
	}
	if err != nil && ctx.Err() == nil {
		c.log.Warn("manifest not reconciled; retrying", zap.String("file", key), zap.Error(err))
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	return true
}

// resync queues every file the directory or the records know.
func (c *Controller) resync(ctx context.Context, q workqueue.TypedInterface[string]) error {
	files, err := c.dir.List()
	if err != nil {
		return err
	}
	recorded, err := c.records.List(ctx)
	if err != nil {
		return err
	}
	for _, f := range append(files, recorded...) {
		q.Add(f)
	}
	return nil
}

// watch queues the manifest each inotify event in the directory concerns.
func (c *Controller) watch(ctx context.Context, q workqueue.TypedInterface[string]) (func(), error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching manifests dir: %w", err)
	}
	if err := w.Add(c.dir.Path); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("watching manifests dir %s: %w", c.dir.Path, err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if f := fileFor(filepath.Base(ev.Name)); f != "" {
					q.Add(f)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow loses events: read everything again.
				c.log.Warn("manifests dir watch", zap.Error(err))
				q.Add(resyncKey)
			}
		}
	}()
	return func() { _ = w.Close() }, nil
}

// poll queues a full pass every interval (when inotify is unavailable).
func (c *Controller) poll(ctx context.Context, q workqueue.TypedInterface[string], interval time.Duration) func() {
	t := time.NewTicker(interval)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				q.Add(resyncKey)
			}
		}
	}()
	return t.Stop
}
