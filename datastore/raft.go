package datastore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.uber.org/zap"
)

// defaultWriteTimeout bounds a write when its context has no deadline.
const defaultWriteTimeout = 30 * time.Second

// RaftStore is the replicated Store: writes go through hashicorp/raft on
// the leader, reads come from the local bbolt state.
type RaftStore struct {
	log       *zap.Logger
	id        string
	raft      *raft.Raft
	fsm       *fsm
	logStore  *raftboltdb.BoltStore
	transport *raft.NetworkTransport
	stream    *tlsStreamLayer
	leader    *leaderFanout
	fwd       *forwarder
	reads     *readIndexer
	leaders   *leaderWatch
	metrics   *storeMetrics

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

var _ Store = (*RaftStore)(nil)

// Open opens (or creates) the store in cfg.Dir and starts raft. It returns
// before a leader is known; call WaitLeader before serving.
func Open(ctx context.Context, cfg Config) (*RaftStore, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("datastore: %w", err)
	}
	s := &RaftStore{log: cfg.Logger, id: cfg.NodeID, closed: make(chan struct{}), leaders: newLeaderWatch(),
		metrics: newStoreMetrics()}
	if err := s.open(cfg); err != nil {
		s.closeResources()
		return nil, err
	}
	return s, nil
}

// open builds the FSM, stores, transport and raft; on error the caller
// releases whatever was opened.
func (s *RaftStore) open(cfg Config) error {
	hcl := newHclog(cfg.Logger.Named("raft"))
	var err error
	if s.fsm, err = openFSM(filepath.Join(cfg.Dir, stateFile), cfg.HistorySize, cfg.BootID, cfg.Logger.Named("fsm")); err != nil {
		return fmt.Errorf("datastore: %w", err)
	}
	s.fsm.commitTime = s.metrics.commit
	s.logStore, err = raftboltdb.New(raftboltdb.Options{
		Path: filepath.Join(cfg.Dir, "raft.db"), NoSync: false, BoltOptions: boltOptions(),
	})
	if err != nil {
		return fmt.Errorf("datastore: open raft log: %w", err)
	}
	logs, err := raft.NewLogCache(1024, timedLogStore{LogStore: s.logStore, h: s.metrics.fsync})
	if err != nil {
		return fmt.Errorf("datastore: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, hcl.Named("snapshots"))
	if err != nil {
		return fmt.Errorf("datastore: open snapshots: %w", err)
	}
	metas, err := snaps.List()
	if err != nil {
		return fmt.Errorf("datastore: list snapshots: %w", err)
	}
	if err := s.catchUpState(snaps, metas); err != nil {
		return err
	}
	snapStore, err := s.syncState(snaps, len(metas) > 0)
	if err != nil {
		return err
	}
	stream, err := newTLSStreamLayer(cfg.BindAddr, cfg.AdvertiseAddr, cfg.ServerTLS, cfg.ClientTLS)
	if err != nil {
		return fmt.Errorf("datastore: %w", err)
	}
	s.stream = stream
	s.fwd = newForwarder(func(addr string, t time.Duration) (net.Conn, error) { return stream.dialKind(addr, t, connForward) })
	s.reads = &readIndexer{fetch: s.fetchReadIndex}
	stream.forward = func(c net.Conn) { s.serveForward(c) }
	go stream.serve()
	s.transport = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: stream, MaxPool: 3, Timeout: 10 * time.Second, Logger: hcl.Named("transport"),
	})
	rc := raftConfig(cfg, hcl)
	hasState, err := raft.HasExistingState(logs, s.logStore, snaps)
	if err != nil {
		return fmt.Errorf("datastore: inspect raft state: %w", err)
	}
	if s.raft, err = raft.NewRaft(rc, s.fsm, logs, s.logStore, snapStore, s.transport); err != nil {
		return fmt.Errorf("datastore: start raft: %w", err)
	}
	r := s.raft
	s.metrics.gauges(s)
	s.observeLeaders()
	s.leader = newLeaderFanout(r.LeaderCh(), func() error { return r.Barrier(time.Minute).Error() })
	if cfg.Bootstrap && !hasState {
		boot := raft.Configuration{Servers: []raft.Server{{
			Suffrage: raft.Voter, ID: raft.ServerID(cfg.NodeID), Address: s.transport.LocalAddr(),
		}}}
		if err := s.raft.BootstrapCluster(boot).Error(); err != nil {
			return fmt.Errorf("datastore: bootstrap raft: %w", err)
		}
		s.log.Info("bootstrapped single-voter raft cluster", zap.String("id", cfg.NodeID),
			zap.String("addr", string(s.transport.LocalAddr())))
	}
	return nil
}

// catchUpState restores the newest snapshot into the state file when the
// file is older than it (deleted, or a crash between a snapshot install and
// its restore). Raft itself skips restores at start (NoSnapshotRestoreOnStart)
// and only replays the log after the snapshot.
func (s *RaftStore) catchUpState(snaps raft.SnapshotStore, metas []*raft.SnapshotMeta) error {
	if len(metas) == 0 || metas[0].Index <= s.fsm.applied {
		return nil
	}
	s.log.Warn("state file is older than the newest snapshot; restoring the snapshot",
		zap.Uint64("stateIndex", s.fsm.applied), zap.Uint64("snapshotIndex", metas[0].Index))
	_, rc, err := snaps.Open(metas[0].ID)
	if err != nil {
		return fmt.Errorf("datastore: open snapshot %s: %w", metas[0].ID, err)
	}
	if err := s.fsm.Restore(rc); err != nil {
		return fmt.Errorf("datastore: %w", err)
	}
	return nil
}

// syncState relaxes the state file's fsyncs now if a persisted snapshot (or,
// for a state never written, the log alone) can rebuild it, else once raft
// has persisted its first snapshot: the store returned reports that.
func (s *RaftStore) syncState(snaps raft.SnapshotStore, hasSnapshot bool) (raft.SnapshotStore, error) {
	if hasSnapshot || s.fsm.isEmpty() {
		if err := s.fsm.relaxSync(); err != nil {
			return nil, fmt.Errorf("datastore: %w", err)
		}
	}
	return persistedSnapshots{SnapshotStore: snaps, onPersisted: func() {
		if err := s.fsm.relaxSync(); err != nil {
			s.log.Warn("state file stays fsynced", zap.Error(err))
		}
	}}, nil
}

// raftConfig tunes raft for fast single-node start and large write batches.
func raftConfig(cfg Config, hcl *hclogAdapter) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.Logger = hcl
	rc.HeartbeatTimeout = 400 * time.Millisecond
	rc.ElectionTimeout = 500 * time.Millisecond
	rc.LeaderLeaseTimeout = 250 * time.Millisecond
	rc.CommitTimeout = 20 * time.Millisecond
	rc.MaxAppendEntries = 512
	rc.BatchApplyCh = true
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.TrailingLogs = cfg.TrailingLogs
	rc.SnapshotInterval = cfg.SnapshotInterval
	rc.NoSnapshotRestoreOnStart = true
	return rc
}

// closeResources closes whatever open managed to create.
func (s *RaftStore) closeResources() {
	var errs []error
	if s.raft != nil {
		errs = append(errs, s.raft.Shutdown().Error())
	}
	if s.leader != nil {
		s.leader.close()
	}
	if s.fwd != nil {
		s.fwd.close()
	}
	if s.transport != nil {
		errs = append(errs, s.transport.Close())
	}
	if s.logStore != nil {
		errs = append(errs, s.logStore.Close())
	}
	if s.fsm != nil {
		errs = append(errs, s.fsm.close())
	}
	s.closeErr = errors.Join(errs...)
}

// Close shuts raft down cleanly and closes the state; watch channels close.
func (s *RaftStore) Close() error {
	s.closeOnce.Do(func() {
		s.transferLeadership()
		close(s.closed)
		s.closeResources()
		if s.closeErr != nil {
			s.closeErr = fmt.Errorf("datastore: close: %w", s.closeErr)
		}
	})
	return s.closeErr
}

func (s *RaftStore) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}
