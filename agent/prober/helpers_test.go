package prober

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// checkNoLeaks fails the test when goroutines started during it outlive it.
// Call it first so its cleanup runs last.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	before := goruntime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for goruntime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				n := goruntime.Stack(buf, true)
				t.Errorf("goroutines: %d before, %d after\n%s", before, goruntime.NumGoroutine(), buf[:n])
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

type execCall struct {
	id  string
	cmd string
}

// fakeExec answers exec probes from a script of exit codes per command name
// (cmd[0]); the last code repeats. Code -1 blocks until the context ends.
type fakeExec struct {
	mu     sync.Mutex
	script map[string][]int
	calls  chan execCall
}

func newFakeExec() *fakeExec {
	return &fakeExec{script: map[string][]int{}, calls: make(chan execCall, 100)}
}

func (f *fakeExec) set(name string, codes ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script[name] = codes
}

func (f *fakeExec) exec(ctx context.Context, id string, cmd []string) (int, []byte, error) {
	f.mu.Lock()
	codes := f.script[cmd[0]]
	code := 0
	if len(codes) > 0 {
		code = codes[0]
		if len(codes) > 1 {
			f.script[cmd[0]] = codes[1:]
		}
	}
	f.mu.Unlock()
	f.calls <- execCall{id: id, cmd: cmd[0]}
	if code == -1 {
		<-ctx.Done()
		return -1, nil, ctx.Err()
	}
	return code, []byte(fmt.Sprintf("%s exit %d", cmd[0], code)), nil
}

// recorder keeps events as "Type Reason message".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(_ k8sruntime.Object, typ, reason, format string, args ...interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, typ+" "+reason+" "+fmt.Sprintf(format, args...))
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

type harness struct {
	t    *testing.T
	fc   *clocktesting.FakeClock
	exec *fakeExec
	rec  *recorder
	m    *Manager
}

func newHarness(t *testing.T) *harness {
	checkNoLeaks(t)
	h := &harness{t: t, fc: clocktesting.NewFakeClock(t0), exec: newFakeExec(), rec: &recorder{}}
	h.m = New(zaptest.NewLogger(t), Deps{Exec: h.exec.exec, Recorder: h.rec, Clock: h.fc})
	t.Cleanup(h.m.Stop)
	return h
}

const waitFor = 5 * time.Second

// call waits for the next exec probe and checks its command.
func (h *harness) call(cmd string) execCall {
	h.t.Helper()
	select {
	case c := <-h.exec.calls:
		if c.cmd != cmd {
			h.t.Fatalf("exec %q, want %q", c.cmd, cmd)
		}
		return c
	case <-time.After(waitFor):
		h.t.Fatalf("no exec of %q", cmd)
	}
	return execCall{}
}

// calls waits for n exec probes, in any order, and returns their commands sorted.
func (h *harness) calls(n int) []string {
	h.t.Helper()
	var out []string
	for range n {
		select {
		case c := <-h.exec.calls:
			out = append(out, c.cmd)
		case <-time.After(waitFor):
			h.t.Fatalf("only %d of %d execs: %v", len(out), n, out)
		}
	}
	sortStrings(out)
	return out
}

func (h *harness) noCall() {
	h.t.Helper()
	select {
	case c := <-h.exec.calls:
		h.t.Fatalf("unexpected exec %+v", c)
	default:
	}
}

// idle waits until exactly n workers sleep until their next probe and
// no other timer (a probe timeout) is pending: everything due is done.
func (h *harness) idle(n int) {
	h.t.Helper()
	h.waitSleeping(n, n)
}

// waitSleeping waits for n sleeping workers and waiters clock timers.
func (h *harness) waitSleeping(n, waiters int) {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	for int(h.m.sleeping.Load()) != n || h.fc.Waiters() != waiters {
		if time.Now().After(deadline) {
			h.t.Fatalf("%d sleeping workers and %d clock waiters, want %d and %d",
				h.m.sleeping.Load(), h.fc.Waiters(), n, waiters)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) update(k Kind, r Result) Update {
	h.t.Helper()
	select {
	case u := <-h.m.Updates():
		if u.Probe != k || u.Result != r {
			h.t.Fatalf("update %+v, want %v %v", u, k, r)
		}
		return u
	case <-time.After(waitFor):
		h.t.Fatalf("no update %v %v", k, r)
	}
	return Update{}
}

func (h *harness) noUpdate() {
	h.t.Helper()
	select {
	case u := <-h.m.Updates():
		h.t.Fatalf("unexpected update %+v", u)
	default:
	}
}

func (h *harness) hasEvent(want string) {
	h.t.Helper()
	for _, e := range h.rec.list() {
		if e == want {
			return
		}
	}
	h.t.Fatalf("no event %q in\n%s", want, strings.Join(h.rec.list(), "\n"))
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// execProbe is an exec probe running cmd, period 10s, timeout 1s,
// thresholds 1/3, changed by mods.
func execProbe(cmd string, mods ...func(*v1.Probe)) *v1.Probe {
	p := &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{cmd}}},
		PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func testPod(containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: uid},
		Spec:       v1.PodSpec{Containers: containers},
	}
}

const uid = types.UID("uid-1")

func newFakeClockForTest() *clocktesting.FakeClock { return clocktesting.NewFakeClock(t0) }

func zaptestLogger(t *testing.T) *zap.Logger { return zaptest.NewLogger(t) }
