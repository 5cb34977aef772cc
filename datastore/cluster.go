package datastore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// retryPause is how long a request waits before trying the leader again
// while an election runs or the leader is unreachable.
const retryPause = 25 * time.Millisecond

// onLeader runs local when this server leads and remote with the leader's
// address otherwise, retrying (until ctx ends) the attempts that were
// refused before anything happened: no leader known, a leader that was
// unreachable or no longer leads. A remote call ends when raft learns of
// another leader; with retrySafe (reads) it is then retried there, else
// (writes, whose outcome is then unknown) the error is returned.
func (s *RaftStore) onLeader(ctx context.Context, retrySafe bool, local func(context.Context) error,
	remote func(ctx context.Context, leader string) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultWriteTimeout)
		defer cancel()
	}
	for {
		var err error
		if s.raft.State() == raft.Leader {
			err = local(ctx)
		} else if leader := s.LeaderAddr(); leader != "" {
			err = s.whileLeader(ctx, leader, remote)
		} else {
			err = fmt.Errorf("no raft leader is known: %w", ErrNotLeader)
		}
		if err == nil || !(errors.Is(err, ErrNotLeader) || errors.Is(err, errNotSent) || retrySafe && errors.Is(err, ErrLeaderChanged)) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last attempt: %w)", ctx.Err(), err)
		case <-s.closed:
			return ErrClosed
		case <-time.After(retryPause):
		}
	}
}

// localReadIndex confirms with a quorum that this server still leads and
// answers an index that covers every write acknowledged so far: the last
// log index (it is at least the commit index, and waiting for it also
// covers a new leader whose commit index still lags its log).
func (s *RaftStore) localReadIndex() (uint64, error) {
	if s.raft.State() != raft.Leader {
		return 0, fmt.Errorf("leader is %q: %w", s.LeaderAddr(), ErrNotLeader)
	}
	if err := s.raft.VerifyLeader().Error(); err != nil {
		return 0, raftErr(err)
	}
	return s.raft.LastIndex(), nil
}

// fetchReadIndex gets the read index from the leader, wherever it is.
func (s *RaftStore) fetchReadIndex(ctx context.Context) (uint64, error) {
	var idx uint64
	err := s.onLeader(ctx, true, func(context.Context) error {
		var err error
		idx, err = s.localReadIndex()
		return err
	}, func(ctx context.Context, leader string) error {
		resp, err := s.fwd.call(ctx, leader, fwdRequest{Op: fwdReadIndex})
		if err != nil {
			return err
		}
		idx = resp.Index
		return resp.err()
	})
	return idx, err
}

// changeMembership applies a join, promote or remove on the leader,
// forwarding it there from a follower.
func (s *RaftStore) changeMembership(ctx context.Context, req *fwdRequest) error {
	return s.onLeader(ctx, false, func(ctx context.Context) error {
		id, addr, t := raft.ServerID(req.ID), raft.ServerAddress(req.Addr), timeoutFor(ctx)
		var f raft.Future
		switch req.Op {
		case fwdJoin:
			f = s.raft.AddNonvoter(id, addr, 0, t)
		case fwdPromote:
			f = s.raft.AddVoter(id, addr, 0, t)
		default:
			f = s.raft.RemoveServer(id, 0, t)
		}
		if err := f.Error(); err != nil {
			return raftErr(err)
		}
		s.log.Info("raft membership changed", zap.Uint8("op", uint8(req.Op)), zap.String("id", req.ID), zap.String("addr", req.Addr))
		return nil
	}, func(ctx context.Context, leader string) error {
		resp, err := s.fwd.call(ctx, leader, *req)
		if err != nil {
			return err
		}
		return resp.err()
	})
}

// Member is one server of the raft configuration.
type Member struct {
	ID     string
	Addr   string
	Voter  bool
	Leader bool
}

// Members lists the servers of the current raft configuration.
func (s *RaftStore) Members() ([]Member, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("datastore: raft configuration: %w", raftErr(err))
	}
	_, leader := s.raft.LeaderWithID()
	var ms []Member
	for _, srv := range f.Configuration().Servers {
		ms = append(ms, Member{ID: string(srv.ID), Addr: string(srv.Address),
			Voter: srv.Suffrage == raft.Voter, Leader: srv.ID == leader})
	}
	return ms, nil
}

// JoinCluster makes this server (opened without Bootstrap) a member of the
// cluster that one of peers (raft addresses) belongs to: it is added as a
// non-voter, catches up, and is then promoted to voter. Peers that cannot
// be reached are skipped; the whole list is retried until ctx ends. With
// existing raft state it only finishes a promotion an earlier start left
// undone.
func (s *RaftStore) JoinCluster(ctx context.Context, peers []string) error {
	for {
		self, err := s.self()
		if err != nil {
			return err
		}
		switch {
		case self != nil && self.Voter:
			return nil
		case self != nil:
			if err := s.promote(ctx); err == nil || ctx.Err() != nil {
				return err
			} else {
				s.log.Warn("raft promotion failed; retrying", zap.Error(err))
			}
		default:
			if len(peers) == 0 {
				return errors.New("datastore: this server is not a Raft member and knows no Raft peers to join " +
					"(does the server it joins run on an external etcd? then give this one the same --datastore-endpoint)")
			}
			if err := s.askToJoin(ctx, peers); err != nil {
				s.log.Warn("joining the raft cluster failed; retrying", zap.Strings("peers", peers), zap.Error(err))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("datastore: joining the raft cluster: %w", ctx.Err())
		case <-s.closed:
			return ErrClosed
		case <-time.After(time.Second):
		}
	}
}

// self is this server's entry in the configuration (nil when absent).
func (s *RaftStore) self() (*Member, error) {
	ms, err := s.Members()
	if err != nil {
		return nil, err
	}
	for i := range ms {
		if ms[i].ID == s.id {
			return &ms[i], nil
		}
	}
	return nil, nil
}

func (s *RaftStore) askToJoin(ctx context.Context, peers []string) error {
	var errs []error
	for _, p := range peers {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp, err := s.fwd.call(cctx, p, fwdRequest{Op: fwdJoin, ID: s.id, Addr: s.Addr()})
		cancel()
		if err == nil {
			err = resp.err()
		}
		if err == nil {
			s.log.Info("added to the raft cluster as a non-voter", zap.String("via", p))
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", p, err))
	}
	return errors.Join(errs...)
}

// promote waits until this non-voter has applied everything the leader
// had committed, then asks the leader to make it a voter.
func (s *RaftStore) promote(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	idx, err := s.fetchReadIndex(cctx)
	if err != nil {
		return err
	}
	if err := s.waitApplied(cctx, idx); err != nil {
		return err
	}
	req := fwdRequest{Op: fwdPromote, ID: s.id, Addr: s.Addr()}
	if err := s.changeMembership(cctx, &req); err != nil {
		return err
	}
	s.log.Info("promoted to raft voter", zap.Uint64("caughtUpTo", idx))
	return nil
}

// RemoveMember removes the server with raft ID id from the cluster.
func (s *RaftStore) RemoveMember(ctx context.Context, id string) error {
	if err := s.changeMembership(ctx, &fwdRequest{Op: fwdRemove, ID: id}); err != nil {
		return fmt.Errorf("datastore: remove raft member %s: %w", id, err)
	}
	return nil
}

// transferLeadership hands leadership to another voter before this leader
// shuts down, so the cluster does not wait for an election timeout.
func (s *RaftStore) transferLeadership() {
	if s.raft == nil || s.raft.State() != raft.Leader {
		return
	}
	ms, err := s.Members()
	if err != nil {
		return
	}
	voters := 0
	for _, m := range ms {
		if m.Voter {
			voters++
		}
	}
	if voters < 2 {
		return
	}
	if err := s.raft.LeadershipTransfer().Error(); err != nil {
		s.log.Warn("leadership transfer before shutdown failed", zap.Error(err))
		return
	}
	s.log.Info("leadership transferred before shutdown")
}
