package datastore

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// applyResult is the FSM response to one command, handed back to the writer
// through raft's ApplyFuture.
type applyResult struct {
	Rev   int64
	Prev  *KV
	Err   error
	Index uint64 // the raft log index of the command (set by applyLocal)
}

// fsm applies replicated commands to a bbolt state file. Each batch of raft
// log entries is applied in one bbolt transaction together with the
// revision and the last applied raft index, so replays after a restart skip
// what is already applied. Events are published after the commit. The
// commits are fsynced until relaxSync (see syncmode.go).
type fsm struct {
	log  *zap.Logger
	path string
	hub  *watchHub

	mu      sync.RWMutex // guards db against replacement by Restore
	db      *bolt.DB
	closed  bool
	rev     atomic.Int64
	applied uint64 // last applied raft index; only touched by raft's FSM goroutine
	notify  *appliedIndex
	// bootID is this boot's ID; unsynced is set (under mu) once commits
	// skip fsync, after the marker naming bootID was written.
	bootID   string
	unsynced bool
	// commitTime, when set, observes each batch's bbolt transaction.
	commitTime prometheus.Observer
}

var (
	_ raft.BatchingFSM = (*fsm)(nil)
	_ raft.FSM         = (*fsm)(nil)
)

// openFSM opens the state file at path, first discarding it when the
// machine went down while it had unsynced writes (discardTornState).
func openFSM(path string, historySize int, bootID string, log *zap.Logger) (*fsm, error) {
	if err := discardTornState(filepath.Dir(path), bootID, log); err != nil {
		return nil, err
	}
	db, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	f := &fsm{log: log, path: path, db: db, bootID: bootID}
	var rev int64
	_ = db.View(func(tx *bolt.Tx) error {
		rev, f.applied = readMeta(tx)
		return nil
	})
	f.rev.Store(rev)
	f.notify = newAppliedIndex(f.applied)
	f.hub = newWatchHub(historySize, rev)
	log.Debug("state opened", zap.String("path", path), zap.Int64("revision", rev),
		zap.Uint64("appliedIndex", f.applied))
	return f, nil
}

// Apply implements raft.FSM.
func (f *fsm) Apply(l *raft.Log) interface{} {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch implements raft.BatchingFSM: one bbolt transaction per batch.
func (f *fsm) ApplyBatch(logs []*raft.Log) []interface{} {
	resps := make([]interface{}, len(logs))
	f.mu.RLock()
	defer f.mu.RUnlock()
	rev, index := f.rev.Load(), f.applied
	var events []Event
	start := time.Now()
	err := f.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV)
		for i, l := range logs {
			if l.Index <= index {
				continue // already applied before a restart
			}
			index = l.Index
			if l.Type != raft.LogCommand {
				continue
			}
			res, evs := f.applyCommand(b, l.Data, rev+1)
			if res.Err == nil {
				rev = res.Rev
				events = append(events, evs...)
			}
			resps[i] = res
		}
		return writeMeta(tx, rev, index)
	})
	if err != nil {
		// The replicated log is intact; crashing lets a restart replay it.
		f.log.Panic("applying committed raft entries to the state file failed", zap.Error(err))
	}
	if f.commitTime != nil {
		f.commitTime.Observe(time.Since(start).Seconds())
	}
	f.rev.Store(rev)
	f.applied = index
	if len(events) > 0 {
		f.hub.publish(events, rev)
	}
	f.notify.set(index)
	return resps
}

// applyCommand dispatches on the command type byte.
func (f *fsm) applyCommand(b *bolt.Bucket, data []byte, rev int64) (*applyResult, []Event) {
	if len(data) == 0 {
		return f.unknown(0), nil
	}
	payload := data[1:]
	switch cmdType(data[0]) {
	case cmdCreate:
		return f.applyCreate(b, payload, rev)
	case cmdUpdate:
		return f.applyUpdate(b, payload, rev)
	case cmdDelete:
		return f.applyDelete(b, payload, rev)
	case cmdTxn:
		return f.applyTxn(b, payload, rev)
	}
	return f.unknown(data[0]), nil
}

func (f *fsm) unknown(t byte) *applyResult {
	f.log.Error("rejecting replicated command of unknown type; is a newer orch version writing to this cluster?",
		zap.Uint8("type", t))
	return &applyResult{Err: fmt.Errorf("command type %d: %w", t, ErrUnknownCommand)}
}

func (f *fsm) applyCreate(b *bolt.Bucket, p []byte, rev int64) (*applyResult, []Event) {
	op, err := decodeCreate(p)
	if err != nil {
		return &applyResult{Err: err}, nil
	}
	return f.applyOps(b, []Op{op}, rev)
}

func (f *fsm) applyUpdate(b *bolt.Bucket, p []byte, rev int64) (*applyResult, []Event) {
	op, err := decodeUpdate(p)
	if err != nil {
		return &applyResult{Err: err}, nil
	}
	return f.applyOps(b, []Op{op}, rev)
}

func (f *fsm) applyDelete(b *bolt.Bucket, p []byte, rev int64) (*applyResult, []Event) {
	op, err := decodeDelete(p)
	if err != nil {
		return &applyResult{Err: err}, nil
	}
	return f.applyOps(b, []Op{op}, rev)
}

func (f *fsm) applyTxn(b *bolt.Bucket, p []byte, rev int64) (*applyResult, []Event) {
	ops, err := decodeTxn(p)
	if err != nil {
		return &applyResult{Err: err}, nil
	}
	return f.applyOps(b, ops, rev)
}

// applyOps evaluates ops at rev and writes them only if all succeed.
func (f *fsm) applyOps(b *bolt.Bucket, ops []Op, rev int64) (*applyResult, []Event) {
	if err := validateOps(ops); err != nil {
		return &applyResult{Err: err}, nil
	}
	get := func(key string) (*KV, error) { return boltGet(b, key) }
	changes, events, err := evalOps(get, ops, rev)
	if err != nil {
		return &applyResult{Err: err}, nil
	}
	for _, c := range changes {
		if c.kv == nil {
			err = b.Delete([]byte(c.key))
		} else {
			err = b.Put([]byte(c.key), encodeKV(c.kv))
		}
		if err != nil {
			// Only bbolt misuse gets here; fail the whole batch loudly.
			f.log.Panic("writing key to the state file failed", zap.String("key", c.key), zap.Error(err))
		}
	}
	return &applyResult{Rev: rev, Prev: events[0].PrevKV}, events
}

// view runs fn in a read transaction of the current state file.
func (f *fsm) view(fn func(tx *bolt.Tx) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return ErrClosed
	}
	return boltErr(f.db.View(fn))
}

// Snapshot implements raft.FSM: a bbolt read transaction, consistent while
// later batches keep committing.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	tx, err := f.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("snapshot state: %w", boltErr(err))
	}
	return &fsmSnapshot{tx: tx, log: f.log}, nil
}

// Restore implements raft.FSM: the snapshot stream replaces the state file.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	tmp := f.path + ".restore"
	if err := writeFileSync(tmp, rc); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.db.Close(); err != nil {
		return fmt.Errorf("restore snapshot: close state: %w", err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	if err := syncDir(filepath.Dir(f.path)); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	db, err := openBolt(f.path)
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	db.NoSync = f.unsynced
	f.db = db
	var rev int64
	_ = db.View(func(tx *bolt.Tx) error {
		rev, f.applied = readMeta(tx)
		return nil
	})
	f.rev.Store(rev)
	f.hub.reset(rev)
	f.notify.set(f.applied)
	f.log.Info("state restored from snapshot", zap.Int64("revision", rev), zap.Uint64("appliedIndex", f.applied))
	return nil
}

// isEmpty reports whether nothing was ever applied to the state: then the
// raft log alone (from its first entry) rebuilds it.
func (f *fsm) isEmpty() bool { return f.rev.Load() == 0 && f.applied == 0 }

// isUnsynced reports whether commits skip fsync.
func (f *fsm) isUnsynced() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.unsynced
}

// relaxSync stops fsyncing the state file's commits, after durably
// recording this boot in the marker. Call it only while a persisted raft
// snapshot or the whole raft log can rebuild the state. Without a boot ID
// the state stays synced.
func (f *fsm) relaxSync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unsynced || f.closed || f.bootID == "" {
		return nil
	}
	if err := writeMarker(filepath.Dir(f.path), f.bootID); err != nil {
		return fmt.Errorf("state file: write %s: %w", unsyncedMarker, err)
	}
	f.unsynced = true
	f.db.NoSync = true
	f.log.Debug("state file commits no longer fsynced: the raft log and snapshots rebuild it")
	return nil
}

// close syncs and closes the state file, removes the unsynced marker and
// closes every watcher.
func (f *fsm) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	f.hub.close()
	if err := f.db.Sync(); err != nil {
		_ = f.db.Close()
		return fmt.Errorf("sync state file: %w", err)
	}
	if err := f.db.Close(); err != nil {
		return err
	}
	return removeMarker(filepath.Dir(f.path))
}
