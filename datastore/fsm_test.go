package datastore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap/zaptest"
)

func TestCommandRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		ops  []Op
		cmd  cmdType
	}{
		{"create", []Op{{Type: OpCreate, Key: "/a", Value: []byte("v")}}, cmdCreate},
		{"create empty value", []Op{{Type: OpCreate, Key: "/a", Value: []byte{}}}, cmdCreate},
		{"update", []Op{{Type: OpUpdate, Key: "/a", Value: []byte("v"), ExpectedRev: 7}}, cmdUpdate},
		{"delete", []Op{{Type: OpDelete, Key: "/a", ExpectedRev: 1 << 40}}, cmdDelete},
		{"txn", []Op{
			{Type: OpCreate, Key: "/a", Value: []byte("1")},
			{Type: OpUpdate, Key: "/b", Value: []byte("2"), ExpectedRev: 3},
			{Type: OpDelete, Key: "/c"},
		}, cmdTxn},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := encodeCommand(tc.ops)
			if cmdType(data[0]) != tc.cmd {
				t.Fatalf("type byte %d, want %d", data[0], tc.cmd)
			}
			got, err := decodeAny(data)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got { // normalise nil vs empty values
				if len(got[i].Value) == 0 {
					got[i].Value = nil
				}
				if len(tc.ops[i].Value) == 0 {
					tc.ops[i].Value = nil
				}
			}
			if !reflect.DeepEqual(got, tc.ops) {
				t.Fatalf("decoded %+v, want %+v", got, tc.ops)
			}
			for cut := 1; cut < len(data); cut++ {
				if _, err := decodeAny(data[:cut]); err == nil {
					t.Fatalf("truncated command (%d of %d bytes) decoded", cut, len(data))
				}
			}
		})
	}
}

// decodeAny decodes any command back to ops (test helper).
func decodeAny(data []byte) ([]Op, error) {
	var op Op
	var err error
	switch cmdType(data[0]) {
	case cmdCreate:
		op, err = decodeCreate(data[1:])
	case cmdUpdate:
		op, err = decodeUpdate(data[1:])
	case cmdDelete:
		op, err = decodeDelete(data[1:])
	case cmdTxn:
		return decodeTxn(data[1:])
	default:
		return nil, ErrUnknownCommand
	}
	return []Op{op}, err
}

func newTestFSM(t *testing.T) *fsm {
	f, err := openFSM(filepath.Join(t.TempDir(), "state.db"), 100, "test-boot", zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.close() })
	return f
}

func cmdLog(index uint64, ops ...Op) *raft.Log {
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: encodeCommand(ops)}
}

func TestFSMBatchAndReplay(t *testing.T) {
	f := newTestFSM(t)
	batch := []*raft.Log{
		cmdLog(1, Op{Type: OpCreate, Key: "/a", Value: []byte("1")}),
		cmdLog(2, Op{Type: OpCreate, Key: "/a", Value: []byte("dup")}), // fails: exists
		{Index: 3, Term: 1, Type: raft.LogConfiguration},
		cmdLog(4, Op{Type: OpUpdate, Key: "/a", Value: []byte("2"), ExpectedRev: 1}),
		{Index: 5, Term: 1, Type: raft.LogCommand, Data: []byte{0x7f, 1, 2}}, // unknown type
		cmdLog(6, Op{Type: OpCreate, Key: "/b"}, Op{Type: OpDelete, Key: "/a", ExpectedRev: 2}),
	}
	resps := f.ApplyBatch(batch)
	wantRev := []int64{1, 0, 0, 2, 0, 3}
	wantErr := []error{nil, ErrKeyExists, nil, nil, ErrUnknownCommand, nil}
	for i, r := range resps {
		res, _ := r.(*applyResult)
		if res == nil {
			if wantRev[i] != 0 || wantErr[i] != nil {
				t.Fatalf("entry %d: no response", i)
			}
			continue
		}
		if res.Rev != wantRev[i] || !errors.Is(res.Err, wantErr[i]) || (wantErr[i] == nil) != (res.Err == nil) {
			t.Fatalf("entry %d: rev %d err %v; want %d %v", i, res.Rev, res.Err, wantRev[i], wantErr[i])
		}
	}
	if f.rev.Load() != 3 || f.applied != 6 {
		t.Fatalf("rev %d applied %d; want 3, 6", f.rev.Load(), f.applied)
	}
	before := fsmDump(t, f)
	// replaying the same entries (restart before a snapshot) changes nothing
	for _, r := range f.ApplyBatch(batch) {
		if r != nil {
			t.Fatalf("replayed entry produced response %+v", r)
		}
	}
	if after := fsmDump(t, f); after != before || f.rev.Load() != 3 {
		t.Fatalf("replay changed state:\n%s\nvs\n%s", before, after)
	}
}

func fsmDump(t *testing.T, f *fsm) string {
	t.Helper()
	var out string
	err := f.view(func(tx *bolt.Tx) error {
		res, err := boltList(tx, "", "", 0)
		out = fmt.Sprint(res)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFSMThroughInmemRaft drives the FSM through a real raft instance with
// in-memory log, stable store and transport.
func TestFSMThroughInmemRaft(t *testing.T) {
	f := newTestFSM(t)
	conf := raft.DefaultConfig()
	conf.LocalID = "n1"
	conf.HeartbeatTimeout, conf.ElectionTimeout = 50*time.Millisecond, 50*time.Millisecond
	conf.LeaderLeaseTimeout, conf.BatchApplyCh, conf.MaxAppendEntries = 50*time.Millisecond, true, 512
	conf.Logger = newHclog(zaptest.NewLogger(t))
	store := raft.NewInmemStore()
	_, trans := raft.NewInmemTransport("n1")
	r, err := raft.NewRaft(conf, f, store, store, raft.NewInmemSnapshotStore(), trans)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown().Error() })
	boot := raft.Configuration{Servers: []raft.Server{{ID: "n1", Address: trans.LocalAddr()}}}
	if err := r.BootstrapCluster(boot).Error(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for r.State() != raft.Leader {
		select {
		case <-ctx.Done():
			t.Fatal("no leader")
		case <-time.After(10 * time.Millisecond):
		}
	}
	futures := make([]raft.ApplyFuture, 100)
	for i := range futures {
		futures[i] = r.Apply(encodeCommand([]Op{{Type: OpCreate, Key: fmt.Sprintf("/k/%03d", i)}}), time.Second)
	}
	revs := map[int64]bool{}
	for i, fu := range futures {
		if err := fu.Error(); err != nil {
			t.Fatal(err)
		}
		res := fu.Response().(*applyResult)
		if res.Err != nil {
			t.Fatalf("create %d: %v", i, res.Err)
		}
		revs[res.Rev] = true
	}
	fu := r.Apply([]byte{0xee}, time.Second)
	if err := fu.Error(); err != nil {
		t.Fatal(err)
	}
	if res := fu.Response().(*applyResult); !errors.Is(res.Err, ErrUnknownCommand) {
		t.Fatalf("unknown command response %v", res.Err)
	}
	if len(revs) != 100 || f.rev.Load() != 100 {
		t.Fatalf("%d distinct revisions, store revision %d; want 100", len(revs), f.rev.Load())
	}
}

func TestRoutineWarning(t *testing.T) {
	tests := []struct {
		msg  string
		args []interface{}
		want bool
	}{
		{"heartbeat timeout reached, starting election", []interface{}{"last-leader-addr", "", "last-leader-id", ""}, true},
		{"heartbeat timeout reached, starting election", []interface{}{"last-leader-addr", "10.0.0.1:6444"}, false},
		{"something else", nil, false},
	}
	for _, tc := range tests {
		if got := routineWarning(tc.msg, tc.args); got != tc.want {
			t.Errorf("routineWarning(%q, %v) = %v, want %v", tc.msg, tc.args, got, tc.want)
		}
	}
}
