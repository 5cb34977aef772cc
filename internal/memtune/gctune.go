package memtune

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// IdleGCPercent is the GC percent of a node (the processes AgentGCPercent
// is for) while it is idle: the heap may grow to 1.25x the live heap. An
// idle node allocates a few hundred KiB a second (probes, heartbeats,
// status checks), so a lower percent costs a collection every few seconds
// and saves ~4 MiB in a server with its agent; while pods start in a burst
// the same percent would collect many times a second, so the tuner goes
// back to AgentGCPercent whenever collections come close together.
const IdleGCPercent = 25

const (
	// busyGap: collections closer than this, twice in a row, mean the
	// process is allocating fast (a burst of pods, a rollout): the busy
	// percent. One close pair is not enough: an idle node collects every
	// 10-40 s, and now and then twice within a second (the runtime's
	// forced collection every two minutes next to a regular one).
	busyGap = time.Second
	busyRun = 2
	// idleGap: collections at least this far apart mean it is idle.
	idleGap = 4 * time.Second
)

// gcTuner picks the GC percent after each collection from the time since
// the ones before (between the two gaps it keeps what it has).
type gcTuner struct {
	busy, idle int
	cur        int
	last       time.Time
	short      int // consecutive gaps under busyGap
	now        func() time.Time
	set        func(int) int
}

func newGCTuner(busy, idle int) *gcTuner {
	return &gcTuner{busy: busy, idle: idle, cur: busy, now: time.Now, set: debug.SetGCPercent}
}

// collected is called once after every collection.
func (t *gcTuner) collected() {
	now := t.now()
	gap := now.Sub(t.last)
	t.last = now
	if gap < busyGap {
		t.short++
	} else {
		t.short = 0
	}
	want := t.cur
	switch {
	case t.short >= busyRun:
		want = t.busy
	case gap >= idleGap:
		want = t.idle
	}
	if want != t.cur {
		t.set(want)
		t.cur = want
	}
}

// tuneGC runs a gcTuner until ctx ends, then leaves the busy percent.
func tuneGC(ctx context.Context, busy, idle int) {
	t := newGCTuner(busy, idle)
	t.set(busy)
	t.last = t.now()
	onEachGC(func() bool {
		if ctx.Err() != nil {
			t.set(busy)
			return false
		}
		t.collected()
		return true
	})
}

// gcSentinel holds a pointer so that it is never a tiny allocation
// (finalizers of those may not run).
type gcSentinel struct{ _ *int }

// onEachGC calls f after every garbage collection until f returns false,
// without a timer: a finalizer runs after the cycle that found its object
// unreachable, and arms the next one with a new object.
func onEachGC(f func() bool) {
	s := new(gcSentinel)
	runtime.SetFinalizer(s, func(*gcSentinel) {
		if f() {
			onEachGC(f)
		}
	})
}
