package datastore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
	"go.uber.org/zap"
)

// ErrStoreInUse means the store's files are locked by a running server.
var ErrStoreInUse = errors.New("the datastore is in use (stop orch server first)")

// ResetOptions name the store directory and the server that becomes the
// only voter of the reset cluster. The store must not be open.
type ResetOptions struct {
	Dir    string // the store directory (Config.Dir)
	NodeID string // this server's raft ID
	Addr   string // this server's advertised raft address (host:port)
	Logger *zap.Logger
}

// ResetResult says what a reset or restore did.
type ResetResult struct {
	Revision int64  // the store's revision afterwards
	Index    uint64 // last raft index kept (reset) or 0 (restore)
	Backup   string // where the replaced files were moved (restore only)
}

// Names of the files and directories in the store directory.
const (
	stateFile     = "state.db"
	raftLogFile   = "raft.db"
	raftSnapsDir  = "snapshots"
	backupPattern = "reset-backup-%d-"
)

func (o *ResetOptions) check() error {
	if o.Dir == "" || o.NodeID == "" || o.Addr == "" {
		return errors.New("datastore: ResetOptions need Dir, NodeID and Addr")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return nil
}

func (o *ResetOptions) voterConfig() raft.Configuration {
	return raft.Configuration{Servers: []raft.Server{{
		Suffrage: raft.Voter, ID: raft.ServerID(o.NodeID), Address: raft.ServerAddress(o.Addr),
	}}}
}

func (o *ResetOptions) raftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(o.NodeID)
	rc.Logger = newHclog(o.Logger.Named("raft"))
	return rc
}

// RestoreSnapshot replaces the store in opts.Dir with the state in a
// snapshot file: it verifies the file's checksum, moves state.db, raft.db
// and snapshots/ aside into reset-backup-<unixtime>/, writes the snapshot's
// state as state.db (with its applied raft index reset to 0, keeping its
// revision, so revisions continue from the snapshot's) and bootstraps a new
// raft log whose configuration is only this server.
func RestoreSnapshot(opts ResetOptions, file string) (ResetResult, error) {
	if err := opts.check(); err != nil {
		return ResetResult{}, err
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return ResetResult{}, fmt.Errorf("restore: %w", err)
	}
	tmp := filepath.Join(opts.Dir, stateFile+".restore")
	meta, err := extractSnapshot(file, tmp)
	if err != nil {
		_ = os.Remove(tmp)
		return ResetResult{}, fmt.Errorf("restore: %w", err)
	}
	release, err := lockStore(opts.Dir)
	if err != nil {
		_ = os.Remove(tmp)
		return ResetResult{}, fmt.Errorf("restore: %w", err)
	}
	backup, err := moveAside(opts.Dir)
	release()
	if err != nil {
		_ = os.Remove(tmp)
		return ResetResult{}, fmt.Errorf("restore: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(opts.Dir, stateFile)); err != nil {
		return ResetResult{}, fmt.Errorf("restore: %w", err)
	}
	if err := bootstrapLog(opts); err != nil {
		return ResetResult{}, fmt.Errorf("restore: %w", err)
	}
	opts.Logger.Info("restored the datastore from a snapshot", zap.String("file", file),
		zap.Int64("revision", meta.Revision), zap.String("backup", backup))
	return ResetResult{Revision: meta.Revision, Backup: backup}, nil
}

// extractSnapshot verifies file and writes its state to dst with the
// applied raft index set to 0.
func extractSnapshot(file, dst string) (SnapshotMeta, error) {
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return SnapshotMeta{}, err
	}
	meta, err := copySnapshotImage(file, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return SnapshotMeta{}, err
	}
	db, err := openBolt(dst)
	if err != nil {
		return SnapshotMeta{}, err
	}
	var rev int64
	err = db.Update(func(tx *bolt.Tx) error {
		rev, _ = readMeta(tx)
		return writeMeta(tx, rev, 0)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return SnapshotMeta{}, fmt.Errorf("reset applied index in %s: %w", dst, err)
	}
	if rev != meta.Revision {
		return SnapshotMeta{}, fmt.Errorf("%s: image revision %d, metadata says %d: %w", file, rev, meta.Revision, ErrSnapshotChecksum)
	}
	return meta, syncDir(filepath.Dir(dst))
}

// lockStore takes shared locks on the state file and raft log, failing
// with ErrStoreInUse while a server holds its exclusive ones; release drops
// them. Files that are missing or unreadable are left to the caller.
func lockStore(dir string) (release func(), err error) {
	var dbs []*bolt.DB
	release = func() {
		for _, db := range dbs {
			_ = db.Close()
		}
	}
	for _, name := range []string{stateFile, raftLogFile} {
		path := filepath.Join(dir, name)
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if errors.Is(err, bolterrors.ErrTimeout) {
			release()
			return nil, fmt.Errorf("%s: %w", path, ErrStoreInUse)
		}
		if err == nil {
			dbs = append(dbs, db)
		}
	}
	return release, nil
}

// moveAside moves the state, raft log and raft snapshots of dir into a new
// backup directory inside it and returns that directory.
func moveAside(dir string) (string, error) {
	backup, err := os.MkdirTemp(dir, fmt.Sprintf(backupPattern, time.Now().Unix()))
	if err != nil {
		return "", err
	}
	for _, name := range []string{stateFile, unsyncedMarker, raftLogFile, raftSnapsDir} {
		err := os.Rename(filepath.Join(dir, name), filepath.Join(backup, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	return backup, syncDir(dir)
}

// bootstrapLog writes a fresh raft log holding only the single-voter
// configuration of this server.
func bootstrapLog(opts ResetOptions) error {
	logs, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(opts.Dir, raftLogFile), BoltOptions: boltOptions()})
	if err != nil {
		return fmt.Errorf("open raft log: %w", err)
	}
	defer logs.Close()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(opts.Dir, 2, newHclog(opts.Logger.Named("raft")))
	if err != nil {
		return fmt.Errorf("open raft snapshots: %w", err)
	}
	_, trans := raft.NewInmemTransport(raft.ServerAddress(opts.Addr))
	defer trans.Close()
	if err := raft.BootstrapCluster(opts.raftConfig(), logs, logs, snaps, trans, opts.voterConfig()); err != nil {
		return fmt.Errorf("bootstrap raft: %w", err)
	}
	return nil
}

// ResetCluster turns the store in opts.Dir into a one-member cluster of this
// server, keeping all its data: hashicorp/raft's RecoverCluster restores the
// newest raft snapshot, applies every entry of the local log (committed or
// not: quorum is gone, so this is the best the survivor knows), writes a
// snapshot whose configuration is only this server and empties the log. The
// state file's applied index is set to the snapshot's index so the FSM's
// bookkeeping matches raft's.
func ResetCluster(opts ResetOptions) (ResetResult, error) {
	if err := opts.check(); err != nil {
		return ResetResult{}, err
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, raftLogFile)); err != nil {
		return ResetResult{}, fmt.Errorf("cluster reset: no raft log in %s: %w", opts.Dir, err)
	}
	release, err := lockStore(opts.Dir)
	if err != nil {
		return ResetResult{}, fmt.Errorf("cluster reset: %w", err)
	}
	release() // the opens below lock the files exclusively
	logs, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(opts.Dir, raftLogFile), BoltOptions: boltOptions()})
	if err != nil {
		return ResetResult{}, fmt.Errorf("cluster reset: open raft log: %w", err)
	}
	defer logs.Close()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(opts.Dir, 2, newHclog(opts.Logger.Named("raft")))
	if err != nil {
		return ResetResult{}, fmt.Errorf("cluster reset: open raft snapshots: %w", err)
	}
	last, err := lastRaftIndex(logs, snaps)
	if err != nil {
		return ResetResult{}, fmt.Errorf("cluster reset: %w", err)
	}
	f, err := openFSM(filepath.Join(opts.Dir, stateFile), 1, readBootID(), opts.Logger.Named("fsm"))
	if err != nil {
		return ResetResult{}, fmt.Errorf("cluster reset: %w", err)
	}
	defer f.close()
	_, trans := raft.NewInmemTransport(raft.ServerAddress(opts.Addr))
	defer trans.Close()
	rf := &recoveryFSM{fsm: f, index: last}
	if err := raft.RecoverCluster(opts.raftConfig(), rf, logs, logs, snaps, trans, opts.voterConfig()); err != nil {
		return ResetResult{}, fmt.Errorf("cluster reset: %w", err)
	}
	opts.Logger.Info("reset the datastore to a one-member raft cluster",
		zap.String("id", opts.NodeID), zap.Uint64("index", last), zap.Int64("revision", f.rev.Load()))
	return ResetResult{Revision: f.rev.Load(), Index: last}, nil
}

// lastRaftIndex is the index RecoverCluster snapshots at: the last log
// entry, else the newest snapshot's.
func lastRaftIndex(logs raft.LogStore, snaps raft.SnapshotStore) (uint64, error) {
	last, err := logs.LastIndex()
	if err != nil {
		return 0, err
	}
	metas, err := snaps.List()
	if err != nil {
		return 0, err
	}
	if last == 0 && len(metas) > 0 {
		last = metas[0].Index
	}
	return last, nil
}

// recoveryBatch is how many replayed entries share one state transaction.
const recoveryBatch = 512

// recoveryFSM adapts the FSM to RecoverCluster: it applies the replayed
// entries in batches (one fsync per batch, not per entry), records the
// recovered index as applied before the final snapshot (configuration
// entries are not passed to Apply), and its snapshot releases the read
// transaction after persisting (RecoverCluster never calls Release).
type recoveryFSM struct {
	*fsm
	index   uint64
	pending []*raft.Log
}

// Apply queues a replayed entry; RecoverCluster ignores the result.
func (r *recoveryFSM) Apply(l *raft.Log) interface{} {
	c := *l
	c.Data = append([]byte(nil), l.Data...)
	r.pending = append(r.pending, &c)
	if len(r.pending) >= recoveryBatch {
		r.flush()
	}
	return nil
}

func (r *recoveryFSM) flush() {
	if len(r.pending) > 0 {
		r.fsm.ApplyBatch(r.pending)
		r.pending = nil
	}
}

func (r *recoveryFSM) Snapshot() (raft.FSMSnapshot, error) {
	r.flush()
	err := r.db.Update(func(tx *bolt.Tx) error {
		rev, applied := readMeta(tx)
		if applied > r.index {
			return fmt.Errorf("state file applied index %d is past the raft log's last index %d", applied, r.index)
		}
		return writeMeta(tx, rev, r.index)
	})
	if err != nil {
		return nil, fmt.Errorf("record recovered index: %w", err)
	}
	r.applied = r.index
	snap, err := r.fsm.Snapshot()
	if err != nil {
		return nil, err
	}
	return releasingSnapshot{snap}, nil
}

type releasingSnapshot struct{ raft.FSMSnapshot }

func (s releasingSnapshot) Persist(sink raft.SnapshotSink) error {
	defer s.Release()
	return s.FSMSnapshot.Persist(sink)
}
