package datastore

import (
	"context"
	"sync"
	"time"
)

// readIndexer batches read-index requests: every caller that arrives while
// no round has started joins the next round, so one leadership check serves
// many concurrent quorum reads, and no caller is served by a round that
// began before it arrived.
type readIndexer struct {
	fetch   func(ctx context.Context) (uint64, error)
	mu      sync.Mutex
	pending *readRound
	running bool
}

type readRound struct {
	done chan struct{}
	idx  uint64
	err  error
}

// readIndexTimeout bounds one round (the leader may be gone).
const readIndexTimeout = 10 * time.Second

func (r *readIndexer) get(ctx context.Context) (uint64, error) {
	r.mu.Lock()
	if r.pending == nil {
		r.pending = &readRound{done: make(chan struct{})}
	}
	round := r.pending
	if !r.running {
		r.running = true
		go r.loop()
	}
	r.mu.Unlock()
	select {
	case <-round.done:
		return round.idx, round.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (r *readIndexer) loop() {
	for {
		r.mu.Lock()
		round := r.pending
		r.pending = nil
		if round == nil {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), readIndexTimeout)
		round.idx, round.err = r.fetch(ctx)
		cancel()
		close(round.done)
	}
}
