package encryption

import (
	"context"
	"fmt"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/orch/orch/datastore"
)

// Store encrypts the values of configured resources on their way into the
// wrapped datastore.Store and decrypts them on the way out (Get, List,
// ListAt, Delete's previous value, Watch events and their PrevKV). Keys,
// revisions and every other value pass through unchanged. The config can be
// swapped while the store is in use (SetConfig).
type Store struct {
	inner datastore.Store
	t     atomic.Pointer[transformer]
	log   *zap.Logger
}

var _ datastore.Store = (*Store)(nil)

// NewStore wraps inner with the providers of c (a validated config).
func NewStore(inner datastore.Store, c *Config, log *zap.Logger) (*Store, error) {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Store{inner: inner, log: log}
	if err := s.SetConfig(c); err != nil {
		return nil, err
	}
	return s, nil
}

// SetConfig makes c the config of every later read and write.
func (s *Store) SetConfig(c *Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	t, err := newTransformer(c)
	if err != nil {
		return err
	}
	s.t.Store(t)
	return nil
}

// Unwrap returns the wrapped store (it holds ciphertext).
func (s *Store) Unwrap() datastore.Store { return s.inner }

// Create implements datastore.Store.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	enc, err := s.encrypt(key, value)
	if err != nil {
		return 0, err
	}
	return s.inner.Create(ctx, key, enc)
}

// Update implements datastore.Store.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectedRev int64) (int64, error) {
	enc, err := s.encrypt(key, value)
	if err != nil {
		return 0, err
	}
	return s.inner.Update(ctx, key, enc, expectedRev)
}

// Delete implements datastore.Store.
func (s *Store) Delete(ctx context.Context, key string, expectedRev int64) (int64, *datastore.KV, error) {
	rev, prev, err := s.inner.Delete(ctx, key, expectedRev)
	if err != nil || prev == nil {
		return rev, prev, err
	}
	dec, derr := s.decryptKV(*prev)
	if derr != nil {
		return rev, nil, derr
	}
	return rev, &dec, nil
}

// Txn implements datastore.Store.
func (s *Store) Txn(ctx context.Context, ops []datastore.Op) (int64, error) {
	out := make([]datastore.Op, len(ops))
	for i, op := range ops {
		out[i] = op
		if op.Type == datastore.OpCreate || op.Type == datastore.OpUpdate {
			enc, err := s.encrypt(op.Key, op.Value)
			if err != nil {
				return 0, err
			}
			out[i].Value = enc
		}
	}
	return s.inner.Txn(ctx, out)
}

// Get implements datastore.Store.
func (s *Store) Get(ctx context.Context, key string) (*datastore.KV, error) {
	kv, err := s.inner.Get(ctx, key)
	if err != nil || kv == nil {
		return kv, err
	}
	dec, err := s.decryptKV(*kv)
	if err != nil {
		return nil, err
	}
	return &dec, nil
}

// List implements datastore.Store.
func (s *Store) List(ctx context.Context, prefix, startKey string, limit int64) (datastore.ListResult, error) {
	res, err := s.inner.List(ctx, prefix, startKey, limit)
	if err != nil {
		return res, err
	}
	return s.decryptList(res)
}

// ListAt implements datastore.Store.
func (s *Store) ListAt(ctx context.Context, prefix, startKey string, limit, rev int64) (datastore.ListResult, error) {
	res, err := s.inner.ListAt(ctx, prefix, startKey, limit, rev)
	if err != nil {
		return res, err
	}
	return s.decryptList(res)
}

// Count implements datastore.Store.
func (s *Store) Count(ctx context.Context, prefix string) (int64, error) {
	return s.inner.Count(ctx, prefix)
}

// Revision implements datastore.Store.
func (s *Store) Revision() int64 { return s.inner.Revision() }

// Sync implements datastore.Store.
func (s *Store) Sync(ctx context.Context) error { return s.inner.Sync(ctx) }

// Close closes the wrapped store.
func (s *Store) Close() error { return s.inner.Close() }

// Watch implements datastore.Store. An event that cannot be decrypted ends
// the watch (the error, naming the key, is logged; the client's re-list then
// fails with it).
func (s *Store) Watch(ctx context.Context, prefix string, fromRev int64) (<-chan datastore.Event, error) {
	in, err := s.inner.Watch(ctx, prefix, fromRev)
	if err != nil {
		return nil, err
	}
	out := make(chan datastore.Event, 64)
	go func() {
		defer close(out)
		for ev := range in {
			dec, err := s.decryptEvent(ev)
			if err != nil {
				s.log.Error("ending a watch on an undecryptable value", zap.String("prefix", prefix), zap.Error(err))
				return
			}
			select {
			case out <- dec:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (s *Store) encrypt(key string, value []byte) ([]byte, error) {
	enc, err := s.t.Load().encrypt(key, value)
	if err != nil {
		return nil, fmt.Errorf("encrypting %q: %w", key, err)
	}
	return enc, nil
}

func (s *Store) decryptKV(kv datastore.KV) (datastore.KV, error) {
	plain, err := s.t.Load().decrypt(kv.Key, kv.Value)
	if err != nil {
		return datastore.KV{}, err
	}
	kv.Value = plain
	return kv, nil
}

func (s *Store) decryptList(res datastore.ListResult) (datastore.ListResult, error) {
	kvs := make([]datastore.KV, len(res.KVs))
	for i, kv := range res.KVs {
		dec, err := s.decryptKV(kv)
		if err != nil {
			return datastore.ListResult{}, err
		}
		kvs[i] = dec
	}
	res.KVs = kvs
	return res, nil
}

func (s *Store) decryptEvent(ev datastore.Event) (datastore.Event, error) {
	kv, err := s.decryptKV(ev.KV)
	if err != nil {
		return ev, err
	}
	ev.KV = kv
	if ev.PrevKV != nil {
		prev, err := s.decryptKV(*ev.PrevKV)
		if err != nil {
			return ev, err
		}
		ev.PrevKV = &prev
	}
	return ev, nil
}
