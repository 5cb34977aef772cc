package datastore

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestHistoryReleasesDroppedEvents: events that fell out of the bounded
// history are no longer reachable through the history's array, so their
// values can be collected (before, up to size more stayed reachable
// until append moved the history).
func TestHistoryReleasesDroppedEvents(t *testing.T) {
	const size = 100
	h := newWatchHub(size, 0)
	var freed atomic.Int64
	for rev := int64(1); rev <= 3*size/2; rev++ {
		v := make([]byte, 1<<10)
		runtime.SetFinalizer(&v[0], func(*byte) { freed.Add(1) })
		h.publish([]Event{{Type: EventCreate, Revision: rev, KV: KV{Key: "/k", Value: v, ModRevision: rev}}}, rev)
	}
	deadline := time.Now().Add(5 * time.Second)
	for freed.Load() < size/2 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := freed.Load(); n < size/2 {
		t.Fatalf("%d of the %d dropped events' values were collected", n, size/2)
	}
	runtime.KeepAlive(h)
}
