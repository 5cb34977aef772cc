package reliability

import "fmt"

// WatchEvent is one event a watch delivered.
type WatchEvent struct {
	Type  string // ADDED, MODIFIED, DELETED
	Key   string
	Value string
	RV    int64
}

// Gap is a range of revisions (From, To] a watch skipped legitimately: it
// got 410 Gone on resume and re-listed at To.
type Gap struct{ From, To int64 }

// WatchLog is what one watcher saw, across its reconnects.
type WatchLog struct {
	Server     int
	StartRV    int64 // the watch started after this revision
	Events     []WatchEvent
	Gaps       []Gap
	Reconnects int // resumed from the last revision seen
	Relists    int // 410 Gone on resume: re-listed
}

// LastRV is the revision of the last event seen, or the start.
func (w *WatchLog) LastRV() int64 {
	last := w.StartRV
	if n := len(w.Events); n > 0 {
		last = w.Events[n-1].RV
	}
	for _, g := range w.Gaps {
		last = max(last, g.To)
	}
	return last
}

func (w *WatchLog) skipped(rv int64) bool {
	for _, g := range w.Gaps {
		if rv > g.From && rv <= g.To {
			return true
		}
	}
	return false
}

var eventType = map[Kind]string{Create: "ADDED", Update: "MODIFIED", Delete: "DELETED"}

// CheckWatch checks one watch stream against the history: revisions
// strictly increase (no duplicates, no reordering), every event that has
// an acknowledged write's revision matches that write, and every
// acknowledged write with a revision in (StartRV, upTo] appears unless a
// re-list skipped it. It returns the problems found.
func CheckWatch(w *WatchLog, h []Op, upTo int64) []string {
	acked := map[int64]Op{}
	for _, op := range h {
		if op.Input.Kind != Get && op.Output.Result == OK && op.Output.RV != 0 {
			acked[op.Output.RV] = op
		}
	}
	var problems []string
	seen := map[int64]bool{}
	last := w.StartRV
	for _, ev := range w.Events {
		if ev.RV <= last {
			problems = append(problems, fmt.Sprintf("server %d: event %s %s rv=%d after rv=%d (duplicate or out of order)",
				w.Server, ev.Type, ev.Key, ev.RV, last))
		}
		last = max(last, ev.RV)
		seen[ev.RV] = true
		if op, ok := acked[ev.RV]; ok {
			if p := mismatch(ev, op); p != "" {
				problems = append(problems, fmt.Sprintf("server %d: %s", w.Server, p))
			}
		}
	}
	for rv, op := range acked {
		if rv > w.StartRV && rv <= upTo && !seen[rv] && !w.skipped(rv) {
			problems = append(problems, fmt.Sprintf("server %d: acknowledged %s of %s at rv=%d missing from the watch (gap)",
				w.Server, op.Input.Kind, op.Input.Key, rv))
		}
	}
	return problems
}

func mismatch(ev WatchEvent, op Op) string {
	want := eventType[op.Input.Kind]
	if ev.Key != op.Input.Key || ev.Type != want || (op.Input.Kind != Delete && ev.Value != op.Input.Value) {
		return fmt.Sprintf("event %s %s %q at rv=%d, but the write acknowledged with that revision was %s %s %q",
			ev.Type, ev.Key, ev.Value, ev.RV, want, op.Input.Key, op.Input.Value)
	}
	return ""
}
