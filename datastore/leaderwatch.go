package datastore

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// ErrLeaderChanged ends a call forwarded to a leader once raft knows of
// another one: a partitioned ex-leader would otherwise hold the call until
// the client's deadline. A write that ends so may or may not be applied.
var ErrLeaderChanged = errors.New("the raft leader changed while the call was in flight")

// leaderWatch broadcasts raft's leader observations.
type leaderWatch struct{ *broadcast }

func newLeaderWatch() *leaderWatch { return &leaderWatch{newBroadcast()} }

// observeLeaders feeds s.leaders from raft's observations until the store
// closes.
func (s *RaftStore) observeLeaders() {
	ch := make(chan raft.Observation, 8)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	s.raft.RegisterObserver(obs)
	go func() {
		defer s.raft.DeregisterObserver(obs)
		var last raft.ServerID
		for {
			select {
			case o := <-ch:
				if lo, ok := o.Data.(raft.LeaderObservation); ok && lo.LeaderID != "" && lo.LeaderID != last {
					last = lo.LeaderID
					s.metrics.leaderChanges.Inc()
				}
				s.leaders.fire()
			case <-s.closed:
				return
			}
		}
	}()
}

// whileLeader runs remote against leader and cancels it as soon as raft
// knows of a different leader; the error then wraps ErrLeaderChanged.
func (s *RaftStore) whileLeader(ctx context.Context, leader string, remote func(context.Context, string) error) error {
	return s.leaders.whileLeader(ctx, s.LeaderAddr, leader, remote)
}

// whileLeader runs remote against leader until current() names another.
func (w *leaderWatch) whileLeader(ctx context.Context, current func() string, leader string,
	remote func(context.Context, string) error) error {
	rctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		for {
			next := w.next()
			if l := current(); l != "" && l != leader {
				cancel(ErrLeaderChanged)
				return
			}
			select {
			case <-next:
			case <-done:
				return
			}
		}
	}()
	err := remote(rctx, leader)
	close(done)
	cancel(nil)
	if err != nil && errors.Is(context.Cause(rctx), ErrLeaderChanged) && ctx.Err() == nil {
		return fmt.Errorf("%w (%s): %w", ErrLeaderChanged, leader, err)
	}
	return err
}
