package reliability

import (
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// op builds a history entry; times in milliseconds.
func op(client int, in Input, out Output, call, ret int) Op {
	return Op{Client: client, Input: in, Output: out, Call: time.Duration(call) * time.Millisecond,
		Return: time.Duration(ret) * time.Millisecond}
}

func create(k, v string) Input           { return Input{Kind: Create, Key: k, Value: v} }
func update(k, v string, rv int64) Input { return Input{Kind: Update, Key: k, Value: v, RV: rv} }
func del(k string, rv int64) Input       { return Input{Kind: Delete, Key: k, RV: rv} }
func get(k string) Input                 { return Input{Kind: Get, Key: k} }
func ok(rv int64) Output                 { return Output{Result: OK, RV: rv} }
func read(v string, rv int64) Output     { return Output{Result: OK, Value: v, RV: rv} }

var (
	conflict = Output{Result: Conflict}
	notFound = Output{Result: NotFound}
	unknown  = Output{Result: Unknown}
)

func TestCheckLinearizable(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    []Op
	}{
		{"sequential create update get delete", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(0, update("a", "v2", 10), ok(11), 2, 3),
			op(1, get("a"), read("v2", 11), 4, 5),
			op(1, update("a", "v3", 10), conflict, 6, 7),
			op(0, del("a", 11), ok(12), 8, 9),
			op(1, get("a"), notFound, 10, 11),
			op(1, create("a", "v4"), ok(13), 12, 13),
		}},
		{"concurrent CAS: one wins, the other conflicts", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(0, update("a", "x", 10), ok(12), 2, 6),
			op(1, update("a", "y", 10), conflict, 3, 5),
			op(2, get("a"), read("v1", 10), 2, 4), // before the update took effect
		}},
		{"timed-out create that took effect later", []Op{
			op(0, create("a", "v1"), unknown, 0, 5),
			op(1, get("a"), notFound, 6, 7),
			op(1, get("a"), read("v1", 20), 8, 9),
			op(1, update("a", "v2", 20), ok(21), 10, 11),
		}},
		{"timed-out update that never took effect", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(0, update("a", "v2", 10), unknown, 2, 3),
			op(1, get("a"), read("v1", 10), 4, 5),
		}},
		{"CAS update racing a delete gets 409 (or 404)", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(0, del("a", 0), ok(11), 2, 5),
			op(1, update("a", "x", 10), conflict, 3, 6),
			op(1, update("a", "y", 10), notFound, 7, 8),
			op(1, del("a", 10), conflict, 9, 10),
		}},
		{"keys are independent", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(1, create("b", "w1"), ok(11), 0, 1),
			op(1, get("b"), read("w1", 11), 2, 3),
			op(0, del("a", 0), ok(12), 2, 3),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := Check(tc.h, 10*time.Second); !r.Linearizable() {
				t.Fatalf("got %s (duplicate revisions %v), want linearizable", r.Result, r.DuplicateRVs)
			}
		})
	}
}

func TestCheckViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    []Op
	}{
		{"lost acknowledged write (stale read)", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(0, update("a", "v2", 10), ok(11), 2, 3),
			op(1, get("a"), read("v1", 10), 4, 5),
		}},
		{"both CAS updates of one revision succeed", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(0, update("a", "x", 10), ok(11), 2, 6),
			op(1, update("a", "y", 10), ok(12), 3, 5),
		}},
		{"acknowledged create not found", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(1, get("a"), notFound, 2, 3),
		}},
		{"revision goes backwards", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(0, del("a", 10), ok(12), 2, 3),
			op(0, create("a", "v2"), ok(11), 4, 5),
		}},
		{"read of a value nobody wrote", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(1, get("a"), read("v9", 10), 2, 3),
		}},
		{"conflict on an unconditional delete", []Op{
			op(0, create("a", "v1"), ok(10), 0, 1),
			op(0, del("a", 0), conflict, 2, 3),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := Check(tc.h, 10*time.Second); r.Result != porcupine.Illegal {
				t.Fatalf("got %s, want Illegal", r.Result)
			}
		})
	}
}

func TestCheckDuplicateRevisions(t *testing.T) {
	h := []Op{
		op(0, create("a", "v1"), ok(10), 0, 1),
		op(1, create("b", "w1"), ok(10), 0, 1),
	}
	if r := Check(h, 10*time.Second); r.Linearizable() || len(r.DuplicateRVs) != 1 {
		t.Fatalf("got %s, duplicates %v; want the duplicate revision 10 reported", r.Result, r.DuplicateRVs)
	}
}

func TestCheckWatch(t *testing.T) {
	h := []Op{
		op(0, create("a", "v1"), ok(10), 0, 1),
		op(0, update("a", "v2", 10), ok(11), 2, 3),
		op(0, del("a", 11), ok(12), 4, 5),
		op(1, get("a"), notFound, 6, 7),
	}
	ev := func(typ, v string, rv int64) WatchEvent { return WatchEvent{Type: typ, Key: "a", Value: v, RV: rv} }
	for _, tc := range []struct {
		name string
		w    WatchLog
		want string // substring of the one problem; "" for none
	}{
		{"complete", WatchLog{StartRV: 9, Events: []WatchEvent{ev("ADDED", "v1", 10), ev("MODIFIED", "v2", 11),
			ev("DELETED", "v2", 12)}}, ""},
		{"starts after", WatchLog{StartRV: 10, Events: []WatchEvent{ev("MODIFIED", "v2", 11), ev("DELETED", "v2", 12)}}, ""},
		{"re-listed over a gap", WatchLog{StartRV: 9, Events: []WatchEvent{ev("ADDED", "v1", 10), ev("DELETED", "v2", 12)},
			Gaps: []Gap{{From: 10, To: 11}}}, ""},
		{"events of unacknowledged writes", WatchLog{StartRV: 9, Events: []WatchEvent{ev("ADDED", "v1", 10),
			ev("MODIFIED", "v2", 11), ev("DELETED", "v2", 12), {Type: "ADDED", Key: "z", Value: "u", RV: 13}}}, ""},
		{"gap", WatchLog{StartRV: 9, Events: []WatchEvent{ev("ADDED", "v1", 10), ev("DELETED", "v2", 12)}}, "missing"},
		{"duplicate", WatchLog{StartRV: 9, Events: []WatchEvent{ev("ADDED", "v1", 10), ev("MODIFIED", "v2", 11),
			ev("MODIFIED", "v2", 11), ev("DELETED", "v2", 12)}}, "duplicate"},
		{"wrong value", WatchLog{StartRV: 9, Events: []WatchEvent{ev("ADDED", "v1", 10), ev("MODIFIED", "v3", 11),
			ev("DELETED", "v2", 12)}}, "acknowledged with that revision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems := CheckWatch(&tc.w, h, 12)
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Fatalf("problems: %v", problems)
			case tc.want != "" && (len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), tc.want)):
				t.Fatalf("problems %v, want one with %q", problems, tc.want)
			}
		})
	}
}
