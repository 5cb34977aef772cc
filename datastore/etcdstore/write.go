package etcdstore

import (
	"context"
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orch/orch/datastore"
)

// maxTxnRetries bounds the read-evaluate-write loop of a Txn that touches a
// key more than once when other writers keep changing its keys.
const maxTxnRetries = 20

// Create implements datastore.Store.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	return s.Txn(ctx, []datastore.Op{{Type: datastore.OpCreate, Key: key, Value: value}})
}

// Update implements datastore.Store.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectedRev int64) (int64, error) {
	return s.Txn(ctx, []datastore.Op{{Type: datastore.OpUpdate, Key: key, Value: value, ExpectedRev: expectedRev}})
}

// Delete implements datastore.Store; prev is the deleted key's last value.
func (s *Store) Delete(ctx context.Context, key string, expectedRev int64) (int64, *datastore.KV, error) {
	resp, err := s.direct(ctx, []datastore.Op{{Type: datastore.OpDelete, Key: key, ExpectedRev: expectedRev}})
	if err != nil {
		return 0, nil, err
	}
	prevs := resp.Responses[0].GetResponseDeleteRange().GetPrevKvs()
	if len(prevs) == 0 {
		return 0, nil, fmt.Errorf("delete %q: etcd returned no previous value", key)
	}
	prev := toKV(prevs[0])
	return resp.Header.Revision, &prev, nil
}

// Txn implements datastore.Store: the ops apply as one etcd transaction at
// one new revision, or not at all.
func (s *Store) Txn(ctx context.Context, ops []datastore.Op) (int64, error) {
	if distinctKeys(ops) {
		resp, err := s.direct(ctx, ops)
		if err != nil {
			return 0, err
		}
		return resp.Header.Revision, nil
	}
	return s.evaluated(ctx, ops)
}

func distinctKeys(ops []datastore.Op) bool {
	seen := make(map[string]bool, len(ops))
	for _, op := range ops {
		if seen[op.Key] {
			return false
		}
		seen[op.Key] = true
	}
	return true
}

// direct runs ops on distinct keys as one etcd Txn whose comparisons are
// exactly the ops' preconditions; when one fails, the Else branch reads
// every key at the same revision so the failing op can be named.
func (s *Store) direct(ctx context.Context, ops []datastore.Op) (*clientv3.TxnResponse, error) {
	if err := s.checkWrite(ops); err != nil {
		return nil, err
	}
	cmps := make([]clientv3.Cmp, 0, len(ops))
	then := make([]clientv3.Op, 0, len(ops))
	reads := make([]clientv3.Op, 0, len(ops))
	for _, op := range ops {
		cmps = append(cmps, precondition(op))
		then = append(then, write(op))
		reads = append(reads, clientv3.OpGet(op.Key))
	}
	resp, err := s.kv.Txn(ctx).If(cmps...).Then(then...).Else(reads...).Commit()
	if err != nil {
		return nil, s.mapErr(err)
	}
	s.observe(resp.Header.Revision)
	if resp.Succeeded {
		return resp, nil
	}
	return nil, failure(ops, readState(ops, resp.Responses))
}

func (s *Store) checkWrite(ops []datastore.Op) error {
	if s.closed.Load() {
		return datastore.ErrClosed
	}
	return datastore.ValidateOps(ops)
}

// precondition is the etcd comparison that holds exactly when op can apply
// to the key's current value.
func precondition(op datastore.Op) clientv3.Cmp {
	mod := clientv3.ModRevision(op.Key)
	switch {
	case op.Type == datastore.OpCreate:
		return clientv3.Compare(mod, "=", 0)
	case op.ExpectedRev != 0:
		return clientv3.Compare(mod, "=", op.ExpectedRev)
	}
	return clientv3.Compare(mod, ">", 0)
}

// write is the etcd request of op (deletes return the previous value).
func write(op datastore.Op) clientv3.Op {
	if op.Type == datastore.OpDelete {
		return clientv3.OpDelete(op.Key, clientv3.WithPrevKV())
	}
	return clientv3.OpPut(op.Key, string(op.Value))
}

// readState maps each op key to its value from the read responses (one per op).
func readState(ops []datastore.Op, resps []*pb.ResponseOp) map[string]*datastore.KV {
	state := make(map[string]*datastore.KV, len(ops))
	for i, op := range ops {
		var cur *datastore.KV
		if i < len(resps) {
			if kvs := resps[i].GetResponseRange().GetKvs(); len(kvs) > 0 {
				kv := toKV(kvs[0])
				cur = &kv
			}
		}
		state[op.Key] = cur
	}
	return state
}

// failure re-evaluates ops against state to return the same error the Raft
// store would (ErrKeyExists, ErrNotFound or ErrConflict naming the op).
func failure(ops []datastore.Op, state map[string]*datastore.KV) error {
	get := func(key string) (*datastore.KV, error) { return state[key], nil }
	if _, err := datastore.EvalOps(get, ops, 0); err != nil {
		return err
	}
	return fmt.Errorf("etcdstore: txn precondition failed: %w", datastore.ErrConflict)
}

// evaluated runs ops that touch a key more than once: read the keys, evaluate
// the ops exactly as the Raft FSM does, and write the net result of each key
// in one etcd Txn guarded by the mod revisions read; retry when another
// writer got in between.
func (s *Store) evaluated(ctx context.Context, ops []datastore.Op) (int64, error) {
	if err := s.checkWrite(ops); err != nil {
		return 0, err
	}
	keys := uniqueKeys(ops)
	for range maxTxnRetries {
		state, err := s.readKeys(ctx, keys)
		if err != nil {
			return 0, err
		}
		get := func(key string) (*datastore.KV, error) { return state[key], nil }
		events, err := datastore.EvalOps(get, ops, 0)
		if err != nil {
			return 0, err
		}
		then, err := netWrites(keys, state, events)
		if err != nil {
			return 0, err
		}
		cmps := make([]clientv3.Cmp, 0, len(keys))
		for _, k := range keys {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", modRev(state[k])))
		}
		resp, err := s.kv.Txn(ctx).If(cmps...).Then(then...).Commit()
		if err != nil {
			return 0, s.mapErr(err)
		}
		s.observe(resp.Header.Revision)
		if resp.Succeeded {
			return resp.Header.Revision, nil
		}
	}
	return 0, fmt.Errorf("etcdstore: txn on %v lost %d races: %w", keys, maxTxnRetries, datastore.ErrConflict)
}

func uniqueKeys(ops []datastore.Op) []string {
	seen := map[string]bool{}
	var keys []string
	for _, op := range ops {
		if !seen[op.Key] {
			seen[op.Key] = true
			keys = append(keys, op.Key)
		}
	}
	return keys
}

func modRev(kv *datastore.KV) int64 {
	if kv == nil {
		return 0
	}
	return kv.ModRevision
}

// readKeys reads keys at one revision.
func (s *Store) readKeys(ctx context.Context, keys []string) (map[string]*datastore.KV, error) {
	gets := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		gets[i] = clientv3.OpGet(k)
	}
	resp, err := s.kv.Txn(ctx).Then(gets...).Commit()
	if err != nil {
		return nil, s.mapErr(err)
	}
	s.observe(resp.Header.Revision)
	state := make(map[string]*datastore.KV, len(keys))
	for i, k := range keys {
		state[k] = nil
		if kvs := resp.Responses[i].GetResponseRange().GetKvs(); len(kvs) > 0 {
			kv := toKV(kvs[0])
			state[k] = &kv
		}
	}
	return state, nil
}

// netWrites is one etcd request per key: its final value after events. A key
// that existed, is deleted and then written again cannot be expressed (etcd
// would keep its old create revision), so that txn is refused.
func netWrites(keys []string, state map[string]*datastore.KV, events []datastore.Event) ([]clientv3.Op, error) {
	last := map[string]datastore.Event{}
	deleted := map[string]bool{}
	for _, ev := range events {
		last[ev.KV.Key] = ev
		if ev.Type == datastore.EventDelete {
			deleted[ev.KV.Key] = true
		}
	}
	var out []clientv3.Op
	for _, k := range keys {
		ev := last[k]
		switch {
		case ev.Type == datastore.EventDelete:
			if state[k] != nil {
				out = append(out, clientv3.OpDelete(k))
			}
		case deleted[k] && state[k] != nil:
			return nil, fmt.Errorf("etcdstore: txn deletes and re-creates %q: %w", k, datastore.ErrUnsupported)
		default:
			out = append(out, clientv3.OpPut(k, string(ev.KV.Value)))
		}
	}
	return out, nil
}
