package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/datastore/etcdstore"
	"github.com/orch/orch/internal/pki"
)

// electionKey is where orch servers sharing one etcd elect the one that runs
// the control loops (outside /registry, so no API list ever sees it).
const electionKey = "/orch/leader"

// DatastoreConfig selects an external etcd instead of the embedded Raft
// store (k3s's --datastore-* flags).
type DatastoreConfig struct {
	Endpoint        string // comma-separated etcd client URLs; empty = embedded Raft store
	CAFile          string
	CertFile        string
	KeyFile         string
	CompactInterval time.Duration // etcd history compaction period (0 = 5m, < 0 = never)
}

// backend is the datastore as the server uses it: the Store, who runs the
// control loops (the Raft leader, or the etcd election winner) and whether
// the datastore can serve (/readyz).
type backend interface {
	datastore.Store
	LeaderCh() <-chan bool
	IsLeader() bool
	Healthy() error
}

var (
	_ backend = raftBackend{}
	_ backend = (*etcdBackend)(nil)
)

// openBackend opens the external etcd when --datastore-endpoint is set, the
// embedded Raft store otherwise.
func openBackend(ctx context.Context, cfg Config, p *Parsed, bundle *pki.Bundle, log *zap.Logger) (backend, error) {
	if d := cfg.Datastore; d.Endpoint == "" && d.CAFile+d.CertFile+d.KeyFile != "" {
		return nil, errors.New("--datastore-cafile, --datastore-certfile and --datastore-keyfile need --datastore-endpoint")
	}
	if cfg.Datastore.Endpoint == "" {
		store, err := openStore(ctx, cfg, p, bundle, log)
		if err != nil {
			return nil, err
		}
		return raftBackend{store}, nil
	}
	return openEtcd(ctx, cfg, p, log)
}

// raftBackend is the embedded Raft store: its leader runs the control loops.
type raftBackend struct{ *datastore.RaftStore }

func (b raftBackend) Healthy() error {
	if b.LeaderAddr() == "" {
		return errors.New("datastore has no raft leader")
	}
	return nil
}

// etcdBackend is an external etcd; an etcd election picks the server that
// runs the control loops.
type etcdBackend struct {
	*etcdstore.Store
	election *etcdstore.Election
}

func openEtcd(ctx context.Context, cfg Config, p *Parsed, log *zap.Logger) (*etcdBackend, error) {
	d := cfg.Datastore
	tlsCfg, err := etcdstore.LoadTLS(d.CAFile, d.CertFile, d.KeyFile)
	if err != nil {
		return nil, err
	}
	log = log.Named("datastore")
	store, err := etcdstore.Open(ctx, etcdstore.Config{
		Endpoints: etcdstore.ParseEndpoints(d.Endpoint), TLS: tlsCfg,
		CompactInterval: d.CompactInterval, Logger: log,
		// Like the Raft store's event history (and kube-apiserver's watch
		// cache): older resourceVersions get 410 Gone even if etcd has them.
		HistoryRevisions: int64(cfg.DefaultWatchCacheSize),
	})
	if err != nil {
		return nil, fmt.Errorf("--datastore-endpoint: %w", err)
	}
	log.Info("using external etcd", zap.Strings("endpoints", etcdstore.ParseEndpoints(d.Endpoint)))
	election := etcdstore.NewElection(store.Client(), electionKey, electionIdentity(cfg, p), etcdstore.DefaultElectionTTL,
		log.Named("election"))
	return &etcdBackend{Store: store, election: election}, nil
}

// electionIdentity names this server in the election key's value.
func electionIdentity(cfg Config, p *Parsed) string {
	name := cfg.NodeName
	if name == "" {
		name, _ = os.Hostname()
	}
	return name + " https://" + net.JoinHostPort(p.Advertise.String(), strconv.Itoa(cfg.HTTPSListenPort))
}

func (b *etcdBackend) LeaderCh() <-chan bool { return b.election.LeaderCh() }
func (b *etcdBackend) IsLeader() bool        { return b.election.IsLeader() }
func (b *etcdBackend) Healthy() error        { return b.Store.Healthy(context.Background()) }

// Close resigns leadership first, so another server takes over at once.
func (b *etcdBackend) Close() error {
	return errors.Join(b.election.Close(), b.Store.Close())
}
