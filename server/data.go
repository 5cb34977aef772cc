package server

import (
	"context"
	"errors"
	"net/http"

	"go.uber.org/zap"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/encryption"
)

// data is the opened datastore and what hangs on it.
type data struct {
	store backend
	// raft is the embedded Raft store (nil on an external etcd): joins,
	// membership, snapshots.
	raft *datastore.RaftStore
	// kv is the store as the API server sees it: through the secrets
	// encryption when it is on.
	kv           datastore.Store
	enc          *encryption.Manager
	snapshotWrap func(http.Handler) http.Handler
	stops        []func()
}

// errRemoved ends Run after `orch server --remove` did its work.
var errRemoved = errors.New("removed from the cluster")

// openData opens the datastore, joins or leaves the Raft cluster as the
// flags say, and starts the snapshots and the secrets encryption. close
// undoes it all in reverse order.
func openData(ctx context.Context, cfg Config, p *Parsed, dir string, bundle *pki.Bundle, peers []string,
	log *zap.Logger) (*data, error) {
	store, err := openBackend(ctx, cfg, p, bundle, log)
	if err != nil {
		return nil, err
	}
	d := &data{store: store, snapshotWrap: func(h http.Handler) http.Handler { return h }}
	d.stops = append(d.stops, func() { closeLogged(log, "datastore", store.Close) })
	if rb, ok := store.(raftBackend); ok {
		d.raft = rb.RaftStore
	}
	if err := d.openRaftParts(ctx, cfg, bundle, peers, log); err != nil {
		d.close()
		return nil, err
	}
	if d.kv, d.enc, err = openEncryption(cfg, dir, store, log); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// openRaftParts handles --remove and --server and starts the snapshots;
// with an external etcd it refuses --remove and does nothing else.
func (d *data) openRaftParts(ctx context.Context, cfg Config, bundle *pki.Bundle, peers []string, log *zap.Logger) error {
	if d.raft == nil {
		if cfg.Remove {
			return errors.New("--remove leaves the embedded Raft store; with --datastore-endpoint, just stop the server")
		}
		return nil
	}
	if cfg.Remove {
		if err := leaveCluster(ctx, d.raft, log); err != nil {
			return err
		}
		return errRemoved
	}
	if cfg.JoinServer != "" {
		if err := d.raft.JoinCluster(ctx, peers); err != nil {
			return err
		}
	}
	wrap, stop, err := startSnapshots(ctx, cfg, d.raft, bundle, log)
	if err != nil {
		return err
	}
	d.snapshotWrap = wrap
	d.stops = append(d.stops, stop)
	return nil
}

func (d *data) close() {
	for i := len(d.stops) - 1; i >= 0; i-- {
		d.stops[i]()
	}
}
