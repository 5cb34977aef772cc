package datastore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A snapshot file is the FSM's bbolt image followed by a trailer:
//
//	[bbolt image][metadata JSON][uint32 big-endian length of the JSON]["ORCHSNP1"]
//
// The metadata holds the image's size and sha256, so one file is
// self-verifying and can be copied around alone (like k3s's
// etcd-snapshot-<node>-<unixtime> files).
const (
	snapshotMagic   = "ORCHSNP1"
	snapshotFormat  = 1
	trailerFixedLen = 4 + len(snapshotMagic)
	maxMetaLen      = 64 << 10
)

var (
	// ErrSnapshotChecksum means a snapshot file's image does not match the
	// sha256 in its metadata (truncated or corrupted file).
	ErrSnapshotChecksum = errors.New("snapshot checksum mismatch")
	// ErrNotSnapshot means a file has no orch snapshot trailer.
	ErrNotSnapshot = errors.New("not an orch datastore snapshot")
)

// SnapshotMeta describes one snapshot: the state it holds and its image.
type SnapshotMeta struct {
	Format    int       `json:"format"`
	Revision  int64     `json:"revision"`
	RaftIndex uint64    `json:"raftIndex"`
	Node      string    `json:"node"`
	Created   time.Time `json:"created"`
	Size      int64     `json:"size"`   // bytes of the bbolt image
	SHA256    string    `json:"sha256"` // hex sha256 of the bbolt image
}

// SaveSnapshot writes a consistent image of the applied state to w, followed
// by its metadata. The image is one bbolt read transaction: it holds exactly
// the writes applied when it began, which include every write acknowledged
// before the call (writes are acknowledged only after they are applied; on
// a follower, Sync first waits until the local state has caught up with the
// leader's commit index).
func (s *RaftStore) SaveSnapshot(ctx context.Context, w io.Writer) (SnapshotMeta, error) {
	if err := s.Sync(ctx); err != nil {
		return SnapshotMeta{}, fmt.Errorf("snapshot: %w", err)
	}
	tx, err := s.fsm.readTx()
	if err != nil {
		return SnapshotMeta{}, fmt.Errorf("snapshot: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	meta := SnapshotMeta{Format: snapshotFormat, Node: s.id, Created: time.Now().UTC()}
	meta.Revision, meta.RaftIndex = readMeta(tx)
	h := sha256.New()
	n, err := tx.WriteTo(io.MultiWriter(w, h))
	if err != nil {
		return SnapshotMeta{}, fmt.Errorf("snapshot: write image: %w", err)
	}
	meta.Size, meta.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	if err := writeTrailer(w, meta); err != nil {
		return SnapshotMeta{}, fmt.Errorf("snapshot: %w", err)
	}
	return meta, nil
}

// SaveSnapshotFile writes a snapshot to path (through path.part, fsynced and
// renamed, so a crash never leaves a half file under the final name). It
// fails if path exists.
func (s *RaftStore) SaveSnapshotFile(ctx context.Context, path string) (SnapshotMeta, error) {
	if _, err := os.Lstat(path); err == nil {
		return SnapshotMeta{}, fmt.Errorf("snapshot %s: %w", path, os.ErrExist)
	}
	tmp := path + ".part"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return SnapshotMeta{}, fmt.Errorf("snapshot: %w", err)
	}
	meta, err := s.SaveSnapshot(ctx, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return SnapshotMeta{}, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return meta, nil
}

// readTx begins a read transaction on the current state file; the caller
// rolls it back.
func (f *fsm) readTx() (*bolt.Tx, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, ErrClosed
	}
	tx, err := f.db.Begin(false)
	return tx, boltErr(err)
}

func writeTrailer(w io.Writer, meta SnapshotMeta) error {
	js, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	buf := bytes.NewBuffer(js)
	_ = binary.Write(buf, binary.BigEndian, uint32(len(js)))
	buf.WriteString(snapshotMagic)
	_, err = w.Write(buf.Bytes())
	return err
}

// ReadSnapshotMeta reads a snapshot file's metadata without checking the
// image (see VerifySnapshot).
func ReadSnapshotMeta(path string) (SnapshotMeta, error) {
	f, err := os.Open(path)
	if err != nil {
		return SnapshotMeta{}, err
	}
	defer f.Close()
	return readTrailer(f, path)
}

func readTrailer(f *os.File, path string) (SnapshotMeta, error) {
	st, err := f.Stat()
	if err != nil {
		return SnapshotMeta{}, err
	}
	size := st.Size()
	fixed := make([]byte, trailerFixedLen)
	if size < int64(trailerFixedLen) {
		return SnapshotMeta{}, fmt.Errorf("%s: %w (file too short)", path, ErrNotSnapshot)
	}
	if _, err := f.ReadAt(fixed, size-int64(trailerFixedLen)); err != nil {
		return SnapshotMeta{}, fmt.Errorf("%s: %w", path, err)
	}
	if string(fixed[4:]) != snapshotMagic {
		return SnapshotMeta{}, fmt.Errorf("%s: %w (no trailer)", path, ErrNotSnapshot)
	}
	n := int64(binary.BigEndian.Uint32(fixed[:4]))
	if n > maxMetaLen || n > size-int64(trailerFixedLen) {
		return SnapshotMeta{}, fmt.Errorf("%s: %w (bad metadata length %d)", path, ErrNotSnapshot, n)
	}
	js := make([]byte, n)
	if _, err := f.ReadAt(js, size-int64(trailerFixedLen)-n); err != nil {
		return SnapshotMeta{}, fmt.Errorf("%s: %w", path, err)
	}
	var meta SnapshotMeta
	if err := json.Unmarshal(js, &meta); err != nil {
		return SnapshotMeta{}, fmt.Errorf("%s: %w (metadata: %w)", path, ErrNotSnapshot, err)
	}
	if meta.Format != snapshotFormat {
		return SnapshotMeta{}, fmt.Errorf("%s: snapshot format %d is not supported by this orch (want %d)", path, meta.Format, snapshotFormat)
	}
	if meta.Size != size-int64(trailerFixedLen)-n {
		return SnapshotMeta{}, fmt.Errorf("%s: image is %d bytes, metadata says %d: %w",
			path, size-int64(trailerFixedLen)-n, meta.Size, ErrSnapshotChecksum)
	}
	return meta, nil
}

// VerifySnapshot checks a snapshot file's image against its sha256.
func VerifySnapshot(path string) (SnapshotMeta, error) {
	return copySnapshotImage(path, io.Discard)
}

// copySnapshotImage verifies the file and copies its image to w. w sees
// the image before the checksum is known: callers discard it on error.
func copySnapshotImage(path string, w io.Writer) (SnapshotMeta, error) {
	f, err := os.Open(path)
	if err != nil {
		return SnapshotMeta{}, err
	}
	defer f.Close()
	meta, err := readTrailer(f, path)
	if err != nil {
		return SnapshotMeta{}, err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(w, h), io.NewSectionReader(f, 0, meta.Size)); err != nil {
		return SnapshotMeta{}, fmt.Errorf("%s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != meta.SHA256 {
		return SnapshotMeta{}, fmt.Errorf("%s: image sha256 %s, metadata says %s: %w", path, got, meta.SHA256, ErrSnapshotChecksum)
	}
	return meta, nil
}
