package datastore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/orch/orch/datastore"
)

// TestSnapshotFileFormat saves a snapshot file and checks its metadata,
// verification, refusal to overwrite and the errors for damaged files.
func TestSnapshotFileFormat(t *testing.T) {
	ctx := context.Background()
	s := datastore.OpenTest(t, datastore.NewTestConfig(t, t.TempDir()))
	for i := 0; i < 20; i++ {
		_, err := s.Create(ctx, fmt.Sprintf("/f/%02d", i), []byte("value"))
		mustOK(t, err)
	}
	path := filepath.Join(t.TempDir(), "snap")
	meta, err := s.SaveSnapshotFile(ctx, path)
	mustOK(t, err)
	if meta.Revision != 20 || meta.Node != "node1" || meta.SHA256 == "" || meta.RaftIndex == 0 || meta.Created.IsZero() {
		t.Fatalf("metadata %+v", meta)
	}
	if got, err := datastore.ReadSnapshotMeta(path); err != nil || got != meta {
		t.Fatalf("ReadSnapshotMeta = %+v, %v; want %+v", got, err, meta)
	}
	if _, err := datastore.VerifySnapshot(path); err != nil {
		t.Fatalf("VerifySnapshot: %v", err)
	}
	if _, err := s.SaveSnapshotFile(ctx, path); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second save over %s: %v, want ErrExist", path, err)
	}
	data, err := os.ReadFile(path)
	mustOK(t, err)
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"flipped image byte", flip(data, 100), datastore.ErrSnapshotChecksum},
		{"truncated", data[:len(data)/2], datastore.ErrNotSnapshot},
		{"image cut short", append(append([]byte{}, data[:10]...), data[meta.Size:]...), datastore.ErrSnapshotChecksum},
		{"not a snapshot", []byte("hello, world"), datastore.ErrNotSnapshot},
		{"empty", nil, datastore.ErrNotSnapshot},
	} {
		p := filepath.Join(t.TempDir(), "bad")
		mustOK(t, os.WriteFile(p, tc.data, 0o600))
		if _, err := datastore.VerifySnapshot(p); !errors.Is(err, tc.want) {
			t.Errorf("%s: VerifySnapshot error %v, want %v", tc.name, err, tc.want)
		}
		if _, err := datastore.RestoreSnapshot(datastore.ResetOptions{Dir: t.TempDir(), NodeID: "n", Addr: "127.0.0.1:1"}, p); !errors.Is(err, tc.want) {
			t.Errorf("%s: RestoreSnapshot error %v, want %v", tc.name, err, tc.want)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 0xff
	return c
}
