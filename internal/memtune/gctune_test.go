package memtune

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

func TestGCTunerFollowsTheGaps(t *testing.T) {
	now := time.Unix(0, 0)
	var set []int
	tu := &gcTuner{busy: 50, idle: 25, cur: 50, last: now, now: func() time.Time { return now },
		set: func(p int) int { set = append(set, p); return 0 }}
	step := func(gap time.Duration, want int) {
		t.Helper()
		now = now.Add(gap)
		tu.collected()
		if tu.cur != want {
			t.Fatalf("after a gap of %v: percent %d, want %d (set %v)", gap, tu.cur, want, set)
		}
	}
	step(200*time.Millisecond, 50) // start-up: busy
	step(10*time.Second, 25)       // idle
	step(5*time.Second, 25)
	step(2*time.Second, 25)        // between the gaps: kept
	step(300*time.Millisecond, 25) // one close pair: still idle
	step(30*time.Second, 25)
	step(300*time.Millisecond, 25)
	step(200*time.Millisecond, 50) // two in a row: busy
	step(100*time.Millisecond, 50)
	step(2*time.Second, 50) // kept
	step(4*time.Second, 25)
	if want := []int{25, 50, 25}; len(set) != len(want) || set[0] != 25 || set[1] != 50 || set[2] != 25 {
		t.Fatalf("percents set %v, want %v (only on changes)", set, want)
	}
}

func TestOnEachGCRunsAfterCollectionsUntilFalse(t *testing.T) {
	var n atomic.Int32
	onEachGC(func() bool { return n.Add(1) < 3 })
	deadline := time.Now().Add(10 * time.Second)
	for n.Load() < 3 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n.Load() != 3 {
		t.Fatalf("called %d times after collections, want 3", n.Load())
	}
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n.Load() != 3 {
		t.Fatalf("called %d times, want no call after it returned false", n.Load())
	}
}

func TestTuneGCBusyThenRestoredAtTheEnd(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ctx, cancel := context.WithCancel(context.Background())
	tuneGC(ctx, 50, 25)
	if p := debug.SetGCPercent(50); p != 50 {
		t.Fatalf("percent %d at the start, want the busy 50", p)
	}
	// Back-to-back collections are busy: the percent stays 50.
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if p := debug.SetGCPercent(50); p != 50 {
		t.Fatalf("percent %d while collecting back to back, want 50", p)
	}
	cancel()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if p := debug.SetGCPercent(100); p != 50 {
		t.Fatalf("percent %d after the context ended, want the busy 50", p)
	}
}
