package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"go.uber.org/zap"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/snapshots"
)

// snapshotDir is --etcd-snapshot-dir or its default.
func snapshotDir(cfg Config) string {
	if cfg.Snapshots.Dir != "" {
		return cfg.Snapshots.Dir
	}
	return snapshots.DefaultDir(cfg.DataDir)
}

// snapshotNode names this server in snapshot file names: --node-name, else
// the host name (as k3s does).
func snapshotNode(cfg Config) string {
	if cfg.NodeName != "" {
		return cfg.NodeName
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "orch"
}

// startSnapshots starts the snapshot schedule (unless disabled) and returns
// the wrapper that serves `orch etcd-snapshot save` requests, and a stop
// function.
func startSnapshots(ctx context.Context, cfg Config, store *datastore.RaftStore, bundle *pki.Bundle,
	log *zap.Logger) (wrap func(http.Handler) http.Handler, stop func(), err error) {
	sc := cfg.Snapshots
	if err := sc.Validate(); err != nil {
		return nil, nil, err
	}
	dir, node, log := snapshotDir(cfg), snapshotNode(cfg), log.Named("snapshots")
	h := snapshots.NewHandler(store, dir, node, bundle.CAPool(), log)
	if sc.Disable {
		return h.Wrap, func() {}, nil
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		job := snapshots.Scheduled(store, dir, node, sc.Retention, log)
		if err := snapshots.RunSchedule(sctx, sc.ScheduleCron, job, log); err != nil {
			log.Error("snapshot schedule stopped", zap.Error(err))
		}
	}()
	log.Info("scheduled datastore snapshots", zap.String("cron", sc.ScheduleCron),
		zap.Int("retention", sc.Retention), zap.String("dir", dir))
	return h.Wrap, func() { cancel(); <-done }, nil
}

// clusterReset is `orch server --cluster-reset [--cluster-reset-restore-path]`:
// it resets (or restores) the datastore offline to a one-member cluster of
// this server and returns; like k3s, the server then exits and must be
// started again without the flag.
func clusterReset(cfg Config, p *Parsed, log *zap.Logger) error {
	if err := cfg.Snapshots.Validate(); err != nil {
		return err
	}
	id, err := raftID(filepath.Join(cfg.DataDir, "server", "raft-id"))
	if err != nil {
		return err
	}
	opts := datastore.ResetOptions{
		Dir:    filepath.Join(cfg.DataDir, "server", "db"),
		NodeID: id,
		Addr:   net.JoinHostPort(p.Advertise.String(), strconv.Itoa(cfg.RaftPort)),
		Logger: log.Named("datastore"),
	}
	if path := cfg.Snapshots.RestorePath; path != "" {
		res, err := datastore.RestoreSnapshot(opts, path)
		if err != nil {
			return fmt.Errorf("--cluster-reset-restore-path: %w", err)
		}
		log.Info("datastore restored from snapshot; the old state was moved aside",
			zap.String("snapshot", path), zap.Int64("revision", res.Revision), zap.String("backup", res.Backup))
	} else {
		res, err := datastore.ResetCluster(opts)
		if err != nil {
			return fmt.Errorf("--cluster-reset: %w", err)
		}
		log.Info("datastore reset to a one-member cluster", zap.Int64("revision", res.Revision), zap.Uint64("raftIndex", res.Index))
	}
	log.Info("Managed datastore cluster membership has been reset, restart without --cluster-reset flag now. "+
		"Back up and delete <data-dir>/server/db on each other server and rejoin them with --server/--token.",
		zap.String("id", id), zap.String("raftAddress", opts.Addr))
	return nil
}
