package datastore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// appliedIndex publishes the FSM's last applied raft index to readers that
// wait for it (read-index reads on any server).
type appliedIndex struct {
	idx      atomic.Uint64
	advanced *broadcast // fired at every advance
}

func newAppliedIndex(start uint64) *appliedIndex {
	a := &appliedIndex{advanced: newBroadcast()}
	a.idx.Store(start)
	return a
}

// set records a new applied index and wakes the waiters.
func (a *appliedIndex) set(i uint64) {
	a.idx.Store(i)
	a.advanced.fire()
}

// broadcast wakes every waiter at once: next returns a channel that the
// following fire closes.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{} // closed and replaced at every fire
}

func newBroadcast() *broadcast { return &broadcast{ch: make(chan struct{})} }

func (b *broadcast) next() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *broadcast) fire() {
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}

// wait blocks until reached(i) holds (checked at every advance and every
// pollEvery), ctx ends or done closes.
func (a *appliedIndex) wait(ctx context.Context, i uint64, done <-chan struct{}, reached func(uint64) bool) error {
	var tick <-chan time.Time
	for {
		ch := a.advanced.next()
		if reached(i) {
			return nil
		}
		if tick == nil {
			t := time.NewTicker(pollEvery)
			defer t.Stop()
			tick = t.C
		}
		select {
		case <-ch:
		case <-tick:
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return ErrClosed
		}
	}
}

// pollEvery is how often a waiter looks at raft's applied index.
const pollEvery = 2 * time.Millisecond
