package server

import (
	"context"
	"sync"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit"
)

// runner is a controller built on the shared kit.Context.
type runner interface {
	Run(ctx context.Context) error
}

// sharedController builds one controller on the shared cache.
type sharedController struct {
	name  string
	build func(*kit.Context) (runner, error)
}

// sharedControllers lists the controllers that share one informer cache.
// Add one line per controller.
func sharedControllers() []sharedController {
	return []sharedController{
		// controllers: one entry each, keep this marker line last
	}
}

// runShared builds every shared controller on one kit.Context, starts the
// cache and runs them until ctx (the leadership) ends.
func runShared(ctx context.Context, client kubernetes.Interface, opts kit.Options, log *zap.Logger) error {
	kc := kit.New(client, log, opts)
	defer kc.Shutdown()
	type built struct {
		name string
		r    runner
	}
	var all []built
	for _, sc := range sharedControllers() {
		r, err := sc.build(kc)
		if err != nil {
			log.Error("building controller", zap.String("controller", sc.name), zap.Error(err))
			continue
		}
		all = append(all, built{sc.name, r})
	}
	if err := kc.Start(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, b := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.r.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("controller stopped", zap.String("controller", b.name), zap.Error(err))
			}
		}()
	}
	wg.Wait()
	return nil
}
