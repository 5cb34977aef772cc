package datastore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

var _ Store = (*MemStore)(nil)

// MemStore is the in-memory twin of the Raft store with the same semantics
// (revisions, atomic Txn, paging, watch history). Use it in unit tests of the
// layers above the datastore.
type MemStore struct {
	mu     sync.RWMutex
	kvs    map[string]*KV
	rev    int64
	hub    *watchHub
	closed bool
}

// NewMemStore returns an empty MemStore keeping historySize watch events
// (<= 0 means the default of 1000).
func NewMemStore(historySize int) *MemStore {
	return &MemStore{kvs: map[string]*KV{}, hub: newWatchHub(historySize, 0)}
}

// Create implements Store.
func (m *MemStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	rev, _, err := m.apply(ctx, []Op{{Type: OpCreate, Key: key, Value: value}})
	return rev, err
}

// Update implements Store.
func (m *MemStore) Update(ctx context.Context, key string, value []byte, expectedRev int64) (int64, error) {
	rev, _, err := m.apply(ctx, []Op{{Type: OpUpdate, Key: key, Value: value, ExpectedRev: expectedRev}})
	return rev, err
}

// Delete implements Store.
func (m *MemStore) Delete(ctx context.Context, key string, expectedRev int64) (int64, *KV, error) {
	rev, events, err := m.apply(ctx, []Op{{Type: OpDelete, Key: key, ExpectedRev: expectedRev}})
	if err != nil {
		return 0, nil, err
	}
	return rev, cloneKV(events[0].PrevKV), nil
}

// Txn implements Store.
func (m *MemStore) Txn(ctx context.Context, ops []Op) (int64, error) {
	rev, _, err := m.apply(ctx, ops)
	return rev, err
}

// apply evaluates ops atomically at the next revision and publishes events.
func (m *MemStore) apply(ctx context.Context, ops []Op) (int64, []Event, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	if err := validateOps(ops); err != nil {
		return 0, nil, err
	}
	ops = cloneOps(ops)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, nil, ErrClosed
	}
	get := func(key string) (*KV, error) { return m.kvs[key], nil }
	changes, events, err := evalOps(get, ops, m.rev+1)
	if err != nil {
		return 0, nil, err
	}
	m.rev++
	for _, c := range changes {
		if c.kv == nil {
			delete(m.kvs, c.key)
		} else {
			m.kvs[c.key] = c.kv
		}
	}
	m.hub.publish(events, m.rev)
	return m.rev, events, nil
}

// cloneOps deep-copies op values so callers may reuse their buffers.
func cloneOps(ops []Op) []Op {
	out := make([]Op, len(ops))
	for i, op := range ops {
		op.Value = append([]byte(nil), op.Value...)
		out[i] = op
	}
	return out
}

// Get implements Store.
func (m *MemStore) Get(ctx context.Context, key string) (*KV, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	kv, ok := m.kvs[key]
	if !ok {
		return nil, fmt.Errorf("get %q: %w", key, ErrNotFound)
	}
	return cloneKV(kv), nil
}

// sortedKeys returns the keys with prefix in order; callers hold mu.
func (m *MemStore) sortedKeys(prefix string) []string {
	keys := make([]string, 0)
	for k := range m.kvs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// List implements Store.
func (m *MemStore) List(ctx context.Context, prefix, startKey string, limit int64) (ListResult, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return ListResult{}, ErrClosed
	}
	res := ListResult{Revision: m.rev, KVs: []KV{}}
	for _, k := range m.sortedKeys(prefix) {
		if k < startKey {
			continue
		}
		if limit > 0 && int64(len(res.KVs)) == limit {
			res.More = true
			break
		}
		res.KVs = append(res.KVs, *cloneKV(m.kvs[k]))
	}
	return res, nil
}

// Count implements Store.
func (m *MemStore) Count(ctx context.Context, prefix string) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return 0, ErrClosed
	}
	return int64(len(m.sortedKeys(prefix))), nil
}

// Sync implements Store: a MemStore's reads are always current.
func (m *MemStore) Sync(ctx context.Context) error { return ctx.Err() }

// Revision implements Store.
func (m *MemStore) Revision() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.rev
}

// Watch implements Store.
func (m *MemStore) Watch(ctx context.Context, prefix string, fromRev int64) (<-chan Event, error) {
	return m.hub.watch(ctx, prefix, fromRev)
}

// Close implements Store; it closes every watch channel.
func (m *MemStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.hub.close()
	return nil
}

// ListAt implements Store.
func (m *MemStore) ListAt(ctx context.Context, prefix, startKey string, limit, rev int64) (ListResult, error) {
	res, err := listAt(m.hub, func(start string, n int64) (ListResult, error) {
		return m.List(ctx, prefix, start, n)
	}, prefix, startKey, limit, rev)
	if err != nil {
		return ListResult{}, errListAt(prefix, rev, err)
	}
	return res, nil
}
