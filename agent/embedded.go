package agent

import (
	"context"
	"sync"

	"go.uber.org/zap"
)

// RunEmbedded runs the agent of an `orch server` for its own node: cfg as
// for Run (DataDir, NodeIP, cluster settings...), joined to the server at
// serverURL with its join token. It blocks like Run.
func RunEmbedded(ctx context.Context, cfg Config, serverURL, token string, log *zap.Logger) error {
	cfg.ServerURL, cfg.Token, cfg.TokenFile = serverURL, token, ""
	return Run(ctx, cfg, log)
}

// StartEmbedded runs RunEmbedded in the background and returns stop, which
// ends the agent and waits for it (containers keep running). An agent that
// fails is logged; the server keeps serving.
func StartEmbedded(ctx context.Context, cfg Config, serverURL, token string, log *zap.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := RunEmbedded(ctx, cfg, serverURL, token, log); err != nil && ctx.Err() == nil {
			log.Error("the server's agent stopped", zap.Error(err))
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
