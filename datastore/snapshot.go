package datastore

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// fsmSnapshot streams a consistent copy of the state file from a bbolt read
// transaction opened in fsm.Snapshot.
type fsmSnapshot struct {
	tx  *bolt.Tx
	log *zap.Logger
}

var _ raft.FSMSnapshot = (*fsmSnapshot)(nil)

// Persist implements raft.FSMSnapshot.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.tx.WriteTo(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return nil
}

// Release implements raft.FSMSnapshot.
func (s *fsmSnapshot) Release() {
	if err := s.tx.Rollback(); err != nil {
		s.log.Debug("release snapshot transaction", zap.Error(err))
	}
}

// writeFileSync copies r into path and fsyncs the file and its directory.
func writeFileSync(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir fsyncs a directory so renames and new files in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
