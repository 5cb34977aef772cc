package kubelet

import (
	"context"
	"testing"
	"time"

	"github.com/orch/orch/agent/runtime"
)

// eventedRuntime is the fake runtime with containerd's task change
// signals.
type eventedRuntime struct {
	*runtime.Fake
	changes chan struct{}
}

func (e eventedRuntime) TaskChanges() <-chan struct{} { return e.changes }

// TestRelistOnTaskChanges: with a runtime that reports task changes, a
// container's exit reaches the pod's queue on the change signal, though
// the relist period is an hour.
func TestRelistOnTaskChanges(t *testing.T) {
	h := newHarness(t)
	rt := eventedRuntime{Fake: h.rt, changes: make(chan struct{}, 1)}
	h.k.cfg.Runtime, h.k.cfg.RelistPeriod = rt, time.Hour
	h.add(testPod("a"))
	h.sync("a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.k.relistLoop(ctx)
	next := func(what string) string {
		t.Helper()
		got := make(chan string, 1)
		go func() {
			key, _ := h.k.queue.Get()
			h.k.queue.Done(key)
			got <- key
		}()
		select {
		case key := <-got:
			return key
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: nothing queued", what)
			return ""
		}
	}
	rt.changes <- struct{}{}
	if key := next("first relist"); key != "default/a" {
		t.Fatalf("first relist queued %q", key)
	}
	h.exit("a", "app", 0, 1, false)
	rt.changes <- struct{}{}
	if key := next("after the exit"); key != "default/a" {
		t.Fatalf("after the exit: queued %q", key)
	}
}
