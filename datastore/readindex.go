package datastore

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"
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

// waitApplied waits until this server has applied the raft log up to idx.
func (s *RaftStore) waitApplied(ctx context.Context, idx uint64) error {
	return s.fsm.notify.wait(ctx, idx, s.closed, s.appliedThrough)
}

// appliedThrough reports whether the FSM has applied every entry up to idx.
// Raft hands the FSM only commands and configurations, so when the log
// ends on a no-op or barrier the FSM's own index stays below idx: once raft
// has dispatched everything up to idx, the entries between the FSM's index
// and idx are read from the log, and if none of them is for the FSM it is
// done.
func (s *RaftStore) appliedThrough(idx uint64) bool {
	applied := s.fsm.notify.idx.Load()
	if applied >= idx {
		return true
	}
	if s.raft.AppliedIndex() < idx {
		return false
	}
	var l raft.Log
	for i := applied + 1; i <= idx; i++ {
		if err := s.logStore.GetLog(i, &l); err != nil {
			return false
		}
		if l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			return false
		}
	}
	return true
}
