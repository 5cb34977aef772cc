package datastore

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/hashicorp/raft"
)

// memSink is a raft.SnapshotSink writing to memory.
type memSink struct {
	bytes.Buffer
	cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { return nil }

// TestFSMSnapshotConsistentWhileWriting takes a snapshot, keeps applying
// batches while it is persisted, and restores it into a second FSM, which
// must hold exactly the state at snapshot time.
func TestFSMSnapshotConsistentWhileWriting(t *testing.T) {
	src := newTestFSM(t)
	index := uint64(0)
	applyN := func(n int, tag string) {
		for i := 0; i < n; i++ {
			index++
			key := fmt.Sprintf("/s/%03d", i%50)
			op := Op{Type: OpUpdate, Key: key, Value: []byte(tag)}
			if src.rev.Load() < 50 {
				op = Op{Type: OpCreate, Key: key, Value: []byte(tag)}
			}
			src.ApplyBatch([]*raft.Log{cmdLog(index, op)})
		}
	}
	applyN(200, "before")
	want, wantRev, wantIndex := fsmDump(t, src), src.rev.Load(), src.applied
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	applyN(300, "after") // writes continue while the snapshot is open
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	applyN(10, "later")

	dst := newTestFSM(t)
	watch, err := dst.hub.watch(t.Context(), "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Restore(io.NopCloser(&sink.Buffer)); err != nil {
		t.Fatal(err)
	}
	if got := fsmDump(t, dst); got != want || dst.rev.Load() != wantRev || dst.applied != wantIndex {
		t.Fatalf("restored rev %d index %d (want %d %d), state equal=%v",
			dst.rev.Load(), dst.applied, wantRev, wantIndex, got == want)
	}
	if _, open := <-watch; open {
		t.Fatal("watcher survived a restore")
	}
	// entries already in the snapshot are skipped, later ones apply
	res := dst.ApplyBatch([]*raft.Log{cmdLog(wantIndex, Op{Type: OpCreate, Key: "/dup"}),
		cmdLog(wantIndex+1, Op{Type: OpCreate, Key: "/new"})})
	if res[0] != nil || res[1].(*applyResult).Rev != wantRev+1 {
		t.Fatalf("apply after restore: %+v %+v", res[0], res[1])
	}
}
