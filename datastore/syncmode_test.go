package datastore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func markerBoot(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, unsyncedMarker))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// A new store has nothing the log cannot rebuild: it skips the state
// file's fsyncs at once; a clean close syncs and removes the marker, so
// the state survives a reboot untouched.
func TestNewStoreRelaxesSyncAndCleanCloseTrustsState(t *testing.T) {
	dir := t.TempDir()
	cfg := NewTestConfig(t, dir)
	cfg.BootID = "boot-a"
	s := OpenTest(t, cfg)
	if !s.fsm.isUnsynced() || markerBoot(t, dir) != "boot-a" {
		t.Fatalf("new store: unsynced %v, marker %q", s.fsm.isUnsynced(), markerBoot(t, dir))
	}
	ctx := context.Background()
	for i := range 20 {
		if _, err := s.Create(ctx, fmt.Sprintf("/k/%02d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if m := markerBoot(t, dir); m != "" {
		t.Fatalf("marker %q after a clean close", m)
	}
	cfg.BootID = "boot-b" // rebooted after a clean stop: nothing to rebuild
	r := OpenTest(t, cfg)
	if n, _ := r.Count(ctx, "/k/"); n != 20 || r.Revision() != 20 {
		t.Fatalf("after a clean stop and a reboot: %d keys at revision %d", n, r.Revision())
	}
}

// A restored state is in no raft snapshot and not in the new log: its
// commits stay fsynced until raft has persisted a snapshot of it.
func TestRestoredStateStaysSyncedUntilSnapshot(t *testing.T) {
	src := t.TempDir()
	cfg := NewTestConfig(t, src)
	s := OpenTest(t, cfg)
	ctx := context.Background()
	for i := range 10 {
		if _, err := s.Create(ctx, fmt.Sprintf("/k/%02d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "snap")
	if _, err := s.SaveSnapshotFile(ctx, file); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := RestoreSnapshot(ResetOptions{Dir: dir, NodeID: cfg.NodeID, Addr: cfg.BindAddr}, file); err != nil {
		t.Fatal(err)
	}
	cfg = NewTestConfig(t, dir)
	cfg.BootID = "boot-a"
	cfg.SnapshotThreshold, cfg.TrailingLogs, cfg.SnapshotInterval = 16, 4, 50*time.Millisecond
	r := OpenTest(t, cfg)
	if r.fsm.isUnsynced() || markerBoot(t, dir) != "" {
		t.Fatalf("restored store unsynced before any snapshot (marker %q)", markerBoot(t, dir))
	}
	for i := range 40 {
		if _, err := r.Create(ctx, fmt.Sprintf("/new/%02d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for markerBoot(t, dir) != "boot-a" {
		if time.Now().After(deadline) {
			t.Fatal("no relaxed sync after the first persisted snapshot")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
