package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// readyState records that the leader has created the bootstrap objects. It is
// a flag for /readyz and a channel for whoever waits for it.
type readyState struct {
	flag atomic.Bool
	once sync.Once
	ch   chan struct{}
}

func newReadyState() *readyState { return &readyState{ch: make(chan struct{})} }

func (r *readyState) set() {
	r.flag.Store(true)
	r.once.Do(func() { close(r.ch) })
}

// runWhileLeader calls run with a context that lives exactly as long as this
// server is the Raft leader, again each time it regains leadership.
func runWhileLeader(ctx context.Context, store backend, log *zap.Logger, run func(context.Context)) {
	changes := store.LeaderCh()
	lead := store.IsLeader()
	for {
		if lead {
			log.Info("leader: running control loops")
			lead = leadUntilLost(ctx, changes, run)
			log.Info("not leader: control loops stopped")
		}
		select {
		case <-ctx.Done():
			return
		case l, ok := <-changes:
			if !ok {
				return
			}
			lead = l
		}
	}
}

// leadUntilLost runs run until leadership is lost or ctx ends, and reports
// whether this server is still leader (only when ctx ended, false otherwise).
func leadUntilLost(ctx context.Context, changes <-chan bool, run func(context.Context)) bool {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go run(lctx)
	for {
		select {
		case <-ctx.Done():
			return false
		case l, ok := <-changes:
			if !ok || !l {
				return false
			}
		}
	}
}

// controller is a leader-only control loop: run returns when ctx ends.
type controller struct {
	name string
	run  func(ctx context.Context) error
}

// leaderTasks runs the bootstrap steps (each retried with back-off until it
// works), announces readiness, and then runs the leader-only control loops
// and lifecycle until lctx ends.
func leaderTasks(lctx context.Context, bootstrap []func(context.Context) error, ready *readyState, loops []controller,
	lifecycle func(context.Context), log *zap.Logger) {
	for _, step := range bootstrap {
		if !retry(lctx, step, log) {
			return
		}
	}
	ready.set()
	for _, c := range loops {
		go func() {
			if err := c.run(lctx); err != nil && lctx.Err() == nil {
				log.Error("controller stopped", zap.String("controller", c.name), zap.Error(err))
			}
		}()
	}
	lifecycle(lctx)
}

// retry runs step until it succeeds (true) or ctx ends (false).
func retry(ctx context.Context, step func(context.Context) error, log *zap.Logger) bool {
	backoff := 100 * time.Millisecond
	for {
		err := step(ctx)
		if err == nil {
			return true
		}
		log.Warn("creating bootstrap objects", zap.Error(err))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
