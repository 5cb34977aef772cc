package datastore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// leaderFanout copies raft's single leadership channel to any number of
// subscribers. Each subscriber channel holds only the latest state.
type leaderFanout struct {
	barrier func() error // run before announcing leadership
	mu      sync.Mutex
	subs    []chan bool
	leader  bool
	done    chan struct{}
	closed  bool
}

func newLeaderFanout(src <-chan bool, barrier func() error) *leaderFanout {
	f := &leaderFanout{done: make(chan struct{}), barrier: barrier}
	go f.run(src)
	return f
}

func (f *leaderFanout) run(src <-chan bool) {
	for {
		select {
		case v := <-src:
			if v && f.barrier() != nil {
				continue // lost leadership before catching up; raft sends false next
			}
			f.mu.Lock()
			if f.closed {
				f.mu.Unlock()
				return
			}
			f.leader = v
			for _, c := range f.subs {
				offerLatest(c, v)
			}
			f.mu.Unlock()
		case <-f.done:
			return
		}
	}
}

// offerLatest replaces any unread value in c (capacity 1) with v.
func offerLatest(c chan bool, v bool) {
	select {
	case <-c:
	default:
	}
	c <- v
}

func (f *leaderFanout) subscribe() <-chan bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan bool, 1)
	if f.closed {
		close(c)
		return c
	}
	c <- f.leader
	f.subs = append(f.subs, c)
	return c
}

func (f *leaderFanout) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	close(f.done)
	for _, c := range f.subs {
		close(c)
	}
}

// LeaderCh returns a new channel that first receives whether this server is
// the leader now, then every leadership change (only the latest unread value
// is kept). true is sent only once the new leader has applied every entry
// committed before, so its local reads are current. The channel is closed
// when the store closes.
func (s *RaftStore) LeaderCh() <-chan bool { return s.leader.subscribe() }

// IsLeader reports whether this server is the raft leader.
func (s *RaftStore) IsLeader() bool { return s.raft.State() == raft.Leader }

// LeaderAddr is the raft transport address of the current leader ("" when
// unknown).
func (s *RaftStore) LeaderAddr() string {
	addr, _ := s.raft.LeaderWithID()
	return string(addr)
}

// WaitLeader waits until a leader is known. On the leader it also waits until
// every committed entry is applied, so reads afterwards see all acknowledged
// writes.
func (s *RaftStore) WaitLeader(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for s.LeaderAddr() == "" {
		select {
		case <-ctx.Done():
			return fmt.Errorf("datastore: waiting for a raft leader: %w", ctx.Err())
		case <-s.closed:
			return ErrClosed
		case <-t.C:
		}
	}
	if !s.IsLeader() {
		return nil
	}
	if err := s.raft.Barrier(timeoutFor(ctx)).Error(); err != nil {
		return fmt.Errorf("datastore: leader barrier: %w", raftErr(err))
	}
	return nil
}

// AddVoter adds (or updates) a voting member; it must run on the leader.
func (s *RaftStore) AddVoter(ctx context.Context, id, addr string) error {
	f := s.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, timeoutFor(ctx))
	if err := f.Error(); err != nil {
		return fmt.Errorf("datastore: add voter %s at %s: %w", id, addr, raftErr(err))
	}
	return nil
}

// RemoveServer removes a member; it must run on the leader.
func (s *RaftStore) RemoveServer(ctx context.Context, id string) error {
	if err := s.raft.RemoveServer(raft.ServerID(id), 0, timeoutFor(ctx)).Error(); err != nil {
		return fmt.Errorf("datastore: remove server %s: %w", id, raftErr(err))
	}
	return nil
}

// timeoutFor turns ctx's deadline into a raft timeout.
func timeoutFor(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left > 0 {
			return left
		}
		return time.Millisecond
	}
	return defaultWriteTimeout
}

// raftErr maps raft errors to our sentinels.
func raftErr(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// Addr is this server's advertised raft transport address.
func (s *RaftStore) Addr() string { return string(s.transport.LocalAddr()) }

// ID is this server's raft ID.
func (s *RaftStore) ID() string { return s.id }
