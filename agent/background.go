package agent

import (
	"context"

	"go.uber.org/zap"
)

// runInBackground runs run until ctx ends or the returned func is called,
// which waits for it to return. An error before that is logged as
// "<what> stopped": the agent's optional parts (DNS, proxy, network
// policy, ingress) never stop the node.
func runInBackground(ctx context.Context, log *zap.Logger, what string, run func(context.Context) error) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := run(ctx); err != nil && ctx.Err() == nil {
			log.Error(what+" stopped", zap.Error(err))
		}
	}()
	return func() { cancel(); <-done }
}
