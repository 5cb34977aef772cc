package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/orch/orch/datastore"
)

var _ datastore.Store = (*Store)(nil)

// healthKey is read by Healthy; like kube-apiserver's etcd probe it need not exist.
const healthKey = "health"

// Store is a datastore.Store on etcd.
type Store struct {
	cfg     Config
	client  *clientv3.Client
	kv      clientv3.KV
	watcher clientv3.Watcher
	log     *zap.Logger

	rev     atomic.Int64 // highest revision seen in any response
	ctx     context.Context
	cancel  context.CancelFunc // ends watches and the compactor on Close
	closed  atomic.Bool
	wg      sync.WaitGroup
	compact *compactor
}

// Open connects to etcd, reads the current revision and starts the
// periodic compaction.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		TLS:         cfg.TLS,
		DialTimeout: cfg.DialTimeout,
		Logger:      cfg.Logger.Named("etcd-client").WithOptions(zap.IncreaseLevel(zap.WarnLevel)),
		Context:     context.WithoutCancel(ctx),
	})
	if err != nil {
		return nil, fmt.Errorf("etcdstore: connecting to %v: %w", cfg.Endpoints, err)
	}
	if cfg.Prefix != "" {
		client.KV = namespace.NewKV(client.KV, cfg.Prefix)
		client.Watcher = namespace.NewWatcher(client.Watcher, cfg.Prefix)
		client.Lease = namespace.NewLease(client.Lease, cfg.Prefix)
	}
	s := &Store{cfg: cfg, client: client, kv: client.KV, watcher: client.Watcher, log: cfg.Logger}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	octx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if err := s.Sync(octx); err != nil {
		s.cancel()
		_ = client.Close()
		return nil, fmt.Errorf("reaching etcd %v: %w", cfg.Endpoints, err)
	}
	s.compact = newCompactor(s.kv, cfg.CompactInterval, s.log.Named("compactor"))
	if cfg.CompactInterval > 0 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.compact.run(s.ctx)
		}()
	}
	return s, nil
}

// Client is the etcd client, for an Election on the same etcd (with the
// store's key prefix applied).
func (s *Store) Client() *clientv3.Client { return s.client }

// Close ends every watch, stops the compactor and disconnects.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cancel()
	s.wg.Wait()
	if err := s.client.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("etcdstore: closing client: %w", err)
	}
	return nil
}

// observe records a response revision.
func (s *Store) observe(r int64) {
	for {
		cur := s.rev.Load()
		if r <= cur || s.rev.CompareAndSwap(cur, r) {
			return
		}
	}
}

// Revision implements datastore.Store: the highest etcd revision this store
// has seen (its own writes, reads, watches and Sync).
func (s *Store) Revision() int64 { return s.rev.Load() }

// Sync implements datastore.Store: etcd reads are linearizable already; Sync
// refreshes Revision with a count-only read.
func (s *Store) Sync(ctx context.Context) error {
	if s.closed.Load() {
		return datastore.ErrClosed
	}
	resp, err := s.kv.Get(ctx, healthKey, clientv3.WithCountOnly())
	if err != nil {
		return s.mapErr(err)
	}
	s.observe(resp.Header.Revision)
	return nil
}

// Healthy reports whether etcd answers a read within a few seconds.
func (s *Store) Healthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.Sync(clientv3.WithRequireLeader(ctx)); err != nil {
		return fmt.Errorf("etcd %v: %w", s.cfg.Endpoints, err)
	}
	return nil
}

// mapErr turns etcd client errors into datastore sentinels.
func (s *Store) mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case s.closed.Load():
		return fmt.Errorf("etcdstore: %w", datastore.ErrClosed)
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("etcdstore: %w: %w", datastore.ErrCompacted, err)
	case unavailable(err):
		// The API answers 503 "the datastore has no leader; try again".
		return fmt.Errorf("etcdstore: etcd unavailable: %w: %w", datastore.ErrNotLeader, err)
	}
	return fmt.Errorf("etcdstore: %w", err)
}

// unavailable reports whether err says etcd cannot serve now (no leader,
// leader changed, no connection): gRPC's Unavailable code.
func unavailable(err error) bool {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable
	}
	return status.Code(err) == codes.Unavailable
}

// toKV converts an etcd key-value.
func toKV(kv *mvccpb.KeyValue) datastore.KV {
	return datastore.KV{Key: string(kv.Key), Value: kv.Value, CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision}
}
