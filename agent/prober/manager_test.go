package prober

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReadinessThresholds(t *testing.T) {
	h := newHarness(t)
	h.exec.set("ready", 0, 0, 1, 1)
	pod := testPod(v1.Container{Name: "c", ReadinessProbe: execProbe("ready", func(p *v1.Probe) {
		p.InitialDelaySeconds, p.SuccessThreshold, p.FailureThreshold = 5, 2, 2
	})})
	h.m.AddPod(pod, map[string]string{"c": "id1"}, "10.42.0.5")
	h.idle(1)
	h.noCall() // initial delay
	if h.m.Readiness(uid, "c") || !h.m.Started(uid, "c") {
		t.Fatal("want started and not ready before the first success")
	}

	h.fc.Step(5 * time.Second)
	if c := h.call("ready"); c.id != "id1" {
		t.Fatalf("exec in %q", c.id)
	}
	h.idle(1)
	h.noUpdate() // one success < successThreshold 2
	if h.m.Readiness(uid, "c") {
		t.Fatal("ready after 1 of 2 successes")
	}

	h.fc.Step(10 * time.Second)
	h.call("ready")
	h.update(Readiness, Success)
	h.idle(1)
	if !h.m.Readiness(uid, "c") {
		t.Fatal("not ready after 2 successes")
	}

	h.fc.Step(10 * time.Second)
	h.call("ready")
	h.idle(1)
	h.noUpdate()
	h.hasEvent("Warning Unhealthy Readiness probe failed: ready exit 1")
	if !h.m.Readiness(uid, "c") {
		t.Fatal("not ready after 1 of 2 failures")
	}

	h.fc.Step(10 * time.Second)
	h.call("ready")
	u := h.update(Readiness, Failure)
	if u.PodUID != uid || u.Container != "c" || u.ContainerID != "id1" || u.Message != "ready exit 1" {
		t.Fatalf("update %+v", u)
	}
	h.idle(1) // readiness keeps probing after failure
	if h.m.Readiness(uid, "c") {
		t.Fatal("ready after 2 failures")
	}
}

func TestLivenessFailureHoldsUntilRestart(t *testing.T) {
	h := newHarness(t)
	h.exec.set("live", 1)
	pod := testPod(v1.Container{Name: "c", LivenessProbe: execProbe("live")})
	h.m.AddPod(pod, map[string]string{"c": "id1"}, "10.42.0.5")
	for i := range 3 {
		h.call("live")
		if i < 2 {
			h.idle(1)
			h.noUpdate()
			if h.m.Result(uid, "c", Liveness) != Success {
				t.Fatal("liveness failed below the threshold")
			}
			h.fc.Step(10 * time.Second)
		}
	}
	u := h.update(Liveness, Failure)
	if u.Message != "live exit 1" {
		t.Fatalf("message %q", u.Message)
	}
	h.idle(0) // held: no more probes of this container
	h.hasEvent("Warning Unhealthy Liveness probe failed: live exit 1")
	if got := KillMessage(u.Container, u.Probe, true); got != "Container c failed liveness probe, will be restarted" {
		t.Fatalf("kill message %q", got)
	}
	h.fc.Step(time.Minute)
	h.noCall()
	if h.m.Result(uid, "c", Liveness) != Failure {
		t.Fatal("liveness result forgotten before restart")
	}

	h.exec.set("live", 0)
	h.m.UpdateContainer(pod, "c", "id2", time.Time{})
	if c := h.call("live"); c.id != "id2" {
		t.Fatalf("probed %q after restart", c.id)
	}
	h.idle(1)
	if h.m.Result(uid, "c", Liveness) != Success {
		t.Fatal("restarted container kept the old liveness result")
	}
	h.noUpdate() // Success is the initial liveness result: no change
}

func TestStartupGatesOtherProbes(t *testing.T) {
	h := newHarness(t)
	h.exec.set("start", 1, 1, 0)
	pod := testPod(v1.Container{Name: "c",
		StartupProbe:   execProbe("start", func(p *v1.Probe) { p.FailureThreshold = 5 }),
		LivenessProbe:  execProbe("live"),
		ReadinessProbe: execProbe("ready"),
	})
	h.m.AddPod(pod, map[string]string{"c": "id1"}, "10.42.0.5")
	for range 2 {
		h.call("start")
		h.idle(1) // only the startup worker sleeps; the others wait for it
		h.noCall()
		if h.m.Started(uid, "c") || h.m.Readiness(uid, "c") {
			t.Fatal("started or ready before the startup probe succeeded")
		}
		h.fc.Step(10 * time.Second)
	}
	h.call("start")
	h.update(Startup, Success)
	if got := h.calls(2); got[0] != "live" || got[1] != "ready" {
		t.Fatalf("after startup: %v", got)
	}
	h.update(Readiness, Success)
	h.idle(2) // startup worker done, liveness and readiness sleep
	if !h.m.Started(uid, "c") || !h.m.Readiness(uid, "c") {
		t.Fatal("not started and ready")
	}
	h.fc.Step(10 * time.Second)
	if got := h.calls(2); got[0] != "live" || got[1] != "ready" {
		t.Fatalf("second period: %v", got)
	}
}

func TestStartupFailure(t *testing.T) {
	h := newHarness(t)
	h.exec.set("start", 1)
	pod := testPod(v1.Container{Name: "c",
		StartupProbe:  execProbe("start", func(p *v1.Probe) { p.FailureThreshold = 2 }),
		LivenessProbe: execProbe("live"),
	})
	h.m.AddPod(pod, map[string]string{"c": "id1"}, "10.42.0.5")
	h.call("start")
	h.idle(1)
	h.fc.Step(10 * time.Second)
	h.call("start")
	u := h.update(Startup, Failure)
	if got := KillMessage(u.Container, u.Probe, false); got != "Container c failed startup probe" {
		t.Fatal(got)
	}
	h.idle(0)
	h.fc.Step(time.Minute)
	h.noCall()
	h.hasEvent("Warning Unhealthy Startup probe failed: start exit 1")
}

func TestReadyAndStartedWithoutProbes(t *testing.T) {
	h := newHarness(t)
	pod := testPod(v1.Container{Name: "plain"}, v1.Container{Name: "live", LivenessProbe: execProbe("live")})
	tests := []struct {
		name                string
		running             map[string]string
		container           string
		wantReady, wantStrt bool
	}{
		{"running without probes", map[string]string{"plain": "a"}, "plain", true, true},
		{"running with liveness only", map[string]string{"live": "b"}, "live", true, true},
		{"not running", map[string]string{}, "plain", false, false},
		{"unknown container", map[string]string{"plain": "a"}, "nope", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.m.AddPod(pod, tt.running, "10.42.0.5")
			if r, s := h.m.Readiness(uid, tt.container), h.m.Started(uid, tt.container); r != tt.wantReady || s != tt.wantStrt {
				t.Fatalf("ready %v started %v, want %v %v", r, s, tt.wantReady, tt.wantStrt)
			}
		})
	}
	if h.m.Readiness("other", "plain") || h.m.Started("other", "plain") {
		t.Fatal("unknown pod is ready or started")
	}
	h.m.UpdateContainer(pod, "plain", "", time.Time{})
	if h.m.Readiness(uid, "plain") {
		t.Fatal("stopped container is ready")
	}
	h.m.RemovePod(uid)
}

func TestSyncPodIsIdempotentAndRestartsOnNewID(t *testing.T) {
	h := newHarness(t)
	pod := testPod(v1.Container{Name: "c", ReadinessProbe: execProbe("ready", func(p *v1.Probe) { p.InitialDelaySeconds = 5 })})
	start := t0.Add(-time.Hour) // long past its initial delay: probed at once
	h.m.SyncPod(pod, "10.42.0.5", map[string]Running{"c": {ID: "id1", StartedAt: start}})
	h.call("ready")
	h.update(Readiness, Success)
	h.idle(1)
	h.m.SyncPod(pod, "10.42.0.5", map[string]Running{"c": {ID: "id1", StartedAt: start}})
	h.idle(1)
	h.noCall()
	if !h.m.Readiness(uid, "c") {
		t.Fatal("re-sync reset readiness")
	}
	h.m.SyncPod(pod, "10.42.0.5", map[string]Running{"c": {ID: "id2"}}) // started now
	if h.m.Readiness(uid, "c") {
		t.Fatal("new container ready before its first probe")
	}
	h.idle(1)
	h.noCall()
	h.fc.Step(5 * time.Second)
	if c := h.call("ready"); c.id != "id2" {
		t.Fatalf("probed %s", c.id)
	}
	h.update(Readiness, Success)
	h.idle(1)
}

func TestRemovePodStopsWorkers(t *testing.T) {
	h := newHarness(t)
	h.exec.set("live", -1) // hangs until its context ends
	pod := testPod(
		v1.Container{Name: "a", LivenessProbe: execProbe("live", func(p *v1.Probe) { p.TimeoutSeconds = 30 })},
		v1.Container{Name: "b", ReadinessProbe: execProbe("ready", func(p *v1.Probe) { p.InitialDelaySeconds = 60 })},
		v1.Container{Name: "s", StartupProbe: execProbe("start", func(p *v1.Probe) { p.InitialDelaySeconds = 60 }),
			ReadinessProbe: execProbe("ready")},
	)
	h.m.AddPod(pod, map[string]string{"a": "1", "b": "2", "s": "3"}, "10.42.0.5")
	h.call("live")       // in flight
	h.waitSleeping(2, 3) // b and s sleep; a's exec timeout is pending
	h.m.RemovePod(uid)
	h.idle(0)
	h.fc.Step(2 * time.Minute)
	h.noCall()
	h.noUpdate()
	if h.m.Started(uid, "a") {
		t.Fatal("removed pod still started")
	}
	// checkNoLeaks verifies at cleanup that every worker goroutine ended.
}

func TestTerminatingPodStopsLiveness(t *testing.T) {
	h := newHarness(t)
	pod := testPod(v1.Container{Name: "c", LivenessProbe: execProbe("live"), ReadinessProbe: execProbe("ready")})
	h.m.AddPod(pod, map[string]string{"c": "id1"}, "10.42.0.5")
	h.calls(2)
	h.update(Readiness, Success)
	h.idle(2)
	deleting := pod.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	h.m.AddPod(deleting, map[string]string{"c": "id1"}, "10.42.0.5")
	h.fc.Step(10 * time.Second)
	h.call("ready")
	h.idle(1) // the liveness worker ended
	h.noCall()
}

func TestExecProbeTimeout(t *testing.T) {
	h := newHarness(t)
	h.exec.set("live", -1)
	pod := testPod(v1.Container{Name: "c", LivenessProbe: execProbe("live", func(p *v1.Probe) {
		p.TimeoutSeconds, p.FailureThreshold = 2, 1
	})})
	h.m.AddPod(pod, map[string]string{"c": "id1"}, "10.42.0.5")
	h.call("live")
	h.waitSleeping(0, 1) // the probe's timeout
	h.fc.Step(2 * time.Second)
	u := h.update(Liveness, Failure)
	if u.Message != `command timed out: "live" timed out after 2s` {
		t.Fatalf("message %q", u.Message)
	}
	h.hasEvent(`Warning Unhealthy Liveness probe failed: command timed out: "live" timed out after 2s`)
}

func TestProbeErrorIsThrownAway(t *testing.T) {
	checkNoLeaks(t)
	fc := newFakeClockForTest()
	rec := &recorder{}
	m := New(zaptestLogger(t), Deps{Recorder: rec, Clock: fc}) // no Exec
	t.Cleanup(m.Stop)
	pod := testPod(v1.Container{Name: "c", LivenessProbe: execProbe("live", func(p *v1.Probe) { p.FailureThreshold = 1 })})
	m.AddPod(pod, map[string]string{"c": "id1"}, "10.42.0.5")
	deadline := time.Now().Add(waitFor)
	for len(rec.list()) == 0 || fc.Waiters() != 1 || m.sleeping.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("events %v, waiters %d", rec.list(), fc.Waiters())
		}
		time.Sleep(time.Millisecond)
	}
	if got := rec.list()[0]; got != `Warning Unhealthy Liveness probe errored and resulted in unknown state: exec is not configured` {
		t.Fatalf("event %q", got)
	}
	if m.Result(uid, "c", Liveness) != Success {
		t.Fatal("an errored probe counted as a failure")
	}
}
