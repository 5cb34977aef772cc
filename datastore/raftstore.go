package datastore

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// Create implements Store.
func (s *RaftStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	res, err := s.write(ctx, []Op{{Type: OpCreate, Key: key, Value: value}})
	if err != nil {
		return 0, err
	}
	return res.Rev, nil
}

// Update implements Store.
func (s *RaftStore) Update(ctx context.Context, key string, value []byte, expectedRev int64) (int64, error) {
	res, err := s.write(ctx, []Op{{Type: OpUpdate, Key: key, Value: value, ExpectedRev: expectedRev}})
	if err != nil {
		return 0, err
	}
	return res.Rev, nil
}

// Delete implements Store.
func (s *RaftStore) Delete(ctx context.Context, key string, expectedRev int64) (int64, *KV, error) {
	res, err := s.write(ctx, []Op{{Type: OpDelete, Key: key, ExpectedRev: expectedRev}})
	if err != nil {
		return 0, nil, err
	}
	return res.Rev, res.Prev, nil
}

// Txn implements Store.
func (s *RaftStore) Txn(ctx context.Context, ops []Op) (int64, error) {
	res, err := s.write(ctx, ops)
	if err != nil {
		return 0, err
	}
	return res.Rev, nil
}

// write replicates ops as one command and waits until it is applied. On a
// follower the command is forwarded to the leader.
func (s *RaftStore) write(ctx context.Context, ops []Op) (*applyResult, error) {
	if err := validateOps(ops); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, ErrClosed
	}
	cmd := encodeCommand(ops)
	var res *applyResult
	err := s.onLeader(ctx, false, func(ctx context.Context) error {
		var err error
		res, err = s.applyLocal(ctx, cmd)
		return err
	}, func(ctx context.Context, leader string) error {
		resp, err := s.fwd.call(ctx, leader, fwdRequest{Op: fwdWrite, Cmd: cmd})
		if err != nil {
			return err
		}
		if resp.Code == codeNotLeader || resp.Code == codeClosed {
			return resp.err() // rejected before the log: safe to retry
		}
		res = &applyResult{Rev: resp.Rev, Prev: resp.Prev, Err: resp.err(), Index: resp.Index}
		// Read your writes: answer once this server has applied it too.
		return s.waitApplied(ctx, resp.Index)
	})
	if err != nil {
		return nil, fmt.Errorf("write %q: %w", ops[0].Key, err)
	}
	if res.Err != nil {
		return nil, res.Err
	}
	return res, nil
}

// applyLocal applies cmd through raft on this server, which must lead.
// ErrNotLeader means the command was not appended to the log.
func (s *RaftStore) applyLocal(ctx context.Context, cmd []byte) (*applyResult, error) {
	if s.raft.State() != raft.Leader {
		return nil, fmt.Errorf("leader is %q: %w", s.LeaderAddr(), ErrNotLeader)
	}
	start := time.Now()
	s.metrics.proposalsPending.Inc()
	f := s.raft.Apply(cmd, timeoutFor(ctx))
	err := f.Error()
	s.metrics.proposalsPending.Dec()
	s.metrics.proposed(start, err)
	if err != nil {
		return nil, raftErr(err)
	}
	res, ok := f.Response().(*applyResult)
	if !ok || res == nil {
		return nil, fmt.Errorf("unexpected FSM response %T", f.Response())
	}
	res.Index = f.Index()
	return res, nil
}

// Get implements Store.
func (s *RaftStore) Get(ctx context.Context, key string) (*KV, error) {
	var kv *KV
	err := s.fsm.view(func(tx *bolt.Tx) error {
		var err error
		kv, err = boltGet(tx.Bucket(bucketKV), key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("get %q: %w", key, err)
	}
	if kv == nil {
		return nil, fmt.Errorf("get %q: %w", key, ErrNotFound)
	}
	return kv, nil
}

// List implements Store.
func (s *RaftStore) List(ctx context.Context, prefix, startKey string, limit int64) (ListResult, error) {
	var res ListResult
	err := s.fsm.view(func(tx *bolt.Tx) error {
		var err error
		res, err = boltList(tx, prefix, startKey, limit)
		return err
	})
	if err != nil {
		return ListResult{}, fmt.Errorf("list %q: %w", prefix, err)
	}
	return res, nil
}

// Count implements Store.
func (s *RaftStore) Count(ctx context.Context, prefix string) (int64, error) {
	var n int64
	err := s.fsm.view(func(tx *bolt.Tx) error {
		n = boltCount(tx, prefix)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("count %q: %w", prefix, err)
	}
	return n, nil
}

// Sync implements Store: it asks the leader for its read index (the leader
// confirms with a quorum that it still leads, then answers its commit
// index) and waits until this server has applied that far. Concurrent
// callers share one round.
func (s *RaftStore) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.isClosed() {
		return ErrClosed
	}
	idx, err := s.reads.get(ctx)
	if err != nil {
		return fmt.Errorf("quorum read: %w", err)
	}
	return s.waitApplied(ctx, idx)
}

// Revision implements Store.
func (s *RaftStore) Revision() int64 { return s.fsm.rev.Load() }

// Watch implements Store.
func (s *RaftStore) Watch(ctx context.Context, prefix string, fromRev int64) (<-chan Event, error) {
	return s.fsm.hub.watch(ctx, prefix, fromRev)
}

// ListAt implements Store.
func (s *RaftStore) ListAt(ctx context.Context, prefix, startKey string, limit, rev int64) (ListResult, error) {
	res, err := listAt(s.fsm.hub, func(start string, n int64) (ListResult, error) {
		return s.List(ctx, prefix, start, n)
	}, prefix, startKey, limit, rev)
	if err != nil {
		return ListResult{}, errListAt(prefix, rev, err)
	}
	return res, nil
}
