package datastore

import (
	"context"
	"sync"
	"sync/atomic"
)

// appliedIndex publishes the FSM's last applied raft index to readers that
// wait for it (read-index reads on any server).
type appliedIndex struct {
	idx atomic.Uint64
	mu  sync.Mutex
	ch  chan struct{} // closed and replaced at every advance
}

func newAppliedIndex(start uint64) *appliedIndex {
	a := &appliedIndex{ch: make(chan struct{})}
	a.idx.Store(start)
	return a
}

// set records a new applied index and wakes the waiters.
func (a *appliedIndex) set(i uint64) {
	a.idx.Store(i)
	a.mu.Lock()
	close(a.ch)
	a.ch = make(chan struct{})
	a.mu.Unlock()
}

// wait blocks until the applied index is at least i, ctx ends or done closes.
func (a *appliedIndex) wait(ctx context.Context, i uint64, done <-chan struct{}) error {
	for {
		a.mu.Lock()
		ch := a.ch
		a.mu.Unlock()
		if a.idx.Load() >= i {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return ErrClosed
		}
	}
}
