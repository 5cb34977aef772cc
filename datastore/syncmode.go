package datastore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// The state file is written without fsync once the raft snapshots and the
// fsynced raft log can rebuild it (etcd's WAL + backend split): every
// acknowledged write is durable in the raft log, so a batch costs the raft
// log's fsyncs only. A process crash loses nothing from the page cache; a
// machine crash (power loss, kernel panic) can leave a torn bbolt file, so
// the state file is then thrown away and rebuilt from the newest raft
// snapshot plus the log after it (catchUpState, raft's replay).
//
// unsyncedMarker, written (fsynced) before the first unsynced commit and
// removed after the final sync at a clean close, holds the boot ID of the
// machine the unsynced writes happened under. Found at open with another
// boot ID, it means the machine went down with unsynced state.
const unsyncedMarker = "state.unsynced"

// bootIDFile identifies the current boot of the machine.
const bootIDFile = "/proc/sys/kernel/random/boot_id"

// readBootID returns this boot's ID, or "" when the kernel does not tell
// (then the state file stays synced).
func readBootID() string {
	b, err := os.ReadFile(bootIDFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// discardTornState removes the state file of dir when its marker names
// another boot: the machine went down while the file had unsynced writes,
// so it may be torn. The caller rebuilds it from the snapshot and log.
func discardTornState(dir, bootID string, log *zap.Logger) error {
	marker := filepath.Join(dir, unsyncedMarker)
	b, err := os.ReadFile(marker)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", marker, err)
	}
	if strings.TrimSpace(string(b)) == bootID && bootID != "" {
		return nil // only the process stopped: the page cache kept every commit
	}
	log.Warn("the machine went down while the state file had unsynced writes; rebuilding it from the raft snapshot and log",
		zap.String("markerBoot", strings.TrimSpace(string(b))), zap.String("boot", bootID))
	if err := os.Remove(filepath.Join(dir, stateFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("discard state file: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("discard state file: %w", err)
	}
	if err := os.Remove(marker); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("discard state file: %w", err)
	}
	return syncDir(dir)
}

// writeMarker durably records that the state file in dir is about to get
// unsynced writes under bootID.
func writeMarker(dir, bootID string) error {
	return writeFileSync(filepath.Join(dir, unsyncedMarker), strings.NewReader(bootID+"\n"))
}

// removeMarker durably removes the marker after the state file was synced.
func removeMarker(dir string) error {
	err := os.Remove(filepath.Join(dir, unsyncedMarker))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(dir)
}

// persistedSnapshots tells onPersisted each time raft has durably written a
// snapshot (its sink closed without error): from then on the snapshot and
// the log after it can rebuild the state.
type persistedSnapshots struct {
	raft.SnapshotStore
	onPersisted func()
}

// Create implements raft.SnapshotStore.
func (p persistedSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := p.SnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	return &persistedSink{SnapshotSink: sink, onPersisted: p.onPersisted}, nil
}

type persistedSink struct {
	raft.SnapshotSink
	onPersisted func()
}

// Close implements raft.SnapshotSink.
func (s *persistedSink) Close() error {
	if err := s.SnapshotSink.Close(); err != nil {
		return err
	}
	s.onPersisted()
	return nil
}
