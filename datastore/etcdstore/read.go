package etcdstore

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orch/orch/datastore"
)

// Get implements datastore.Store.
func (s *Store) Get(ctx context.Context, key string) (*datastore.KV, error) {
	if s.closed.Load() {
		return nil, datastore.ErrClosed
	}
	resp, err := s.kv.Get(ctx, key)
	if err != nil {
		return nil, s.mapErr(err)
	}
	s.observe(resp.Header.Revision)
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("get %q: %w", key, datastore.ErrNotFound)
	}
	kv := toKV(resp.Kvs[0])
	return &kv, nil
}

// rangeOf returns the etcd range [start, end) of keys with prefix from startKey.
func rangeOf(prefix, startKey string) (start, end string) {
	start = max(prefix, startKey)
	if start == "" {
		start = "\x00" // etcd has no empty key; "\x00" with end "\x00" is everything
	}
	return start, clientv3.GetPrefixRangeEnd(prefix)
}

// List implements datastore.Store.
func (s *Store) List(ctx context.Context, prefix, startKey string, limit int64) (datastore.ListResult, error) {
	return s.list(ctx, prefix, startKey, limit, 0)
}

// ListAt implements datastore.Store with a range read at rev.
func (s *Store) ListAt(ctx context.Context, prefix, startKey string, limit, rev int64) (datastore.ListResult, error) {
	if rev <= 0 {
		return datastore.ListResult{}, fmt.Errorf("list %q at revision %d: revision must be positive", prefix, rev)
	}
	if err := s.checkHistory(rev); err != nil {
		return datastore.ListResult{}, fmt.Errorf("list %q: %w", prefix, err)
	}
	res, err := s.list(ctx, prefix, startKey, limit, rev)
	if errors.Is(err, rpctypes.ErrFutureRev) {
		return s.list(ctx, prefix, startKey, limit, 0) // as the Raft store: read now
	}
	return res, err
}

func (s *Store) list(ctx context.Context, prefix, startKey string, limit, rev int64) (datastore.ListResult, error) {
	if s.closed.Load() {
		return datastore.ListResult{}, datastore.ErrClosed
	}
	start, end := rangeOf(prefix, startKey)
	opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(limit)}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := s.kv.Get(ctx, start, opts...)
	if err != nil {
		return datastore.ListResult{}, fmt.Errorf("list %q at revision %d: %w", prefix, rev, s.mapErr(err))
	}
	s.observe(resp.Header.Revision)
	res := datastore.ListResult{KVs: make([]datastore.KV, len(resp.Kvs)), Revision: resp.Header.Revision, More: resp.More}
	if rev > 0 {
		res.Revision = rev
	}
	for i, kv := range resp.Kvs {
		res.KVs[i] = toKV(kv)
	}
	return res, nil
}

// Count implements datastore.Store.
func (s *Store) Count(ctx context.Context, prefix string) (int64, error) {
	if s.closed.Load() {
		return 0, datastore.ErrClosed
	}
	start, end := rangeOf(prefix, "")
	resp, err := s.kv.Get(ctx, start, clientv3.WithRange(end), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("count %q: %w", prefix, s.mapErr(err))
	}
	s.observe(resp.Header.Revision)
	return resp.Count, nil
}

// checkHistory refuses revisions older than Config.HistoryRevisions.
func (s *Store) checkHistory(rev int64) error {
	h := s.cfg.HistoryRevisions
	if cur := s.Revision(); h > 0 && rev < cur-h {
		return fmt.Errorf("revision %d is older than the kept %d revisions (current %d): %w",
			rev, h, cur, datastore.ErrCompacted)
	}
	return nil
}
