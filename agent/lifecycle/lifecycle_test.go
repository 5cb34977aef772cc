package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const waitFor = 5 * time.Second

func checkNoLeaks(t *testing.T) {
	t.Helper()
	before := goruntime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(waitFor)
		for goruntime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Errorf("goroutines: %d before, %d after\n%s", before, goruntime.NumGoroutine(), buf[:goruntime.Stack(buf, true)])
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

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

// scriptedExec answers every exec with code, out and err; code -1 blocks
// until the context ends.
func scriptedExec(code int, out string, err error) func(context.Context, string, []string) (int, []byte, error) {
	return func(ctx context.Context, _ string, _ []string) (int, []byte, error) {
		if code == -1 {
			<-ctx.Done()
			return -1, nil, ctx.Err()
		}
		return code, []byte(out), err
	}
}

var pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"}}

func withHook(post, pre *v1.LifecycleHandler) *v1.Container {
	return &v1.Container{Name: "c", Lifecycle: &v1.Lifecycle{PostStart: post, PreStop: pre},
		Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 1}}}
}

func TestRun(t *testing.T) {
	checkNoLeaks(t)
	var gotUA atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA.Store(r.UserAgent())
		w.WriteHeader(http.StatusInternalServerError) // kubelet ignores the status of hooks
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	closed := freePort(t)
	boom := errors.New("boom")
	tests := []struct {
		name    string
		exec    func(context.Context, string, []string) (int, []byte, error)
		handler v1.LifecycleHandler
		wantErr error // errors.Is target
		anyErr  bool  // some error, whatever it is
		wantMsg string
	}{
		{name: "exec ok", exec: scriptedExec(0, "", nil), handler: v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"check"}}}},
		{name: "exec exit 1", exec: scriptedExec(1, "bad", nil), handler: v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"check", "x"}}},
			wantErr: ErrExitCode,
			wantMsg: `Exec lifecycle hook ([check x]) for Container "c" in Pod "web_default(uid-1)" failed - error: command exited with a non-zero code: command 'check x' exited with 1, message: "bad"`},
		{name: "exec runtime error", exec: scriptedExec(0, "", boom), handler: v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"check"}}},
			wantErr: boom},
		{name: "no exec", handler: v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"check"}}}, wantErr: ErrNoExec},
		{name: "http 500 is fine", handler: v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/hook", Port: intstr.FromInt32(int32(port))}}},
		{name: "http refused", handler: v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/hook", Port: intstr.FromInt32(int32(closed))}},
			anyErr: true},
		{name: "http bad named port", handler: v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/x", Port: intstr.FromString("nope")}},
			wantMsg: `HTTP lifecycle hook (/x) for Container "c" in Pod "web_default(uid-1)" failed - error: couldn't find port: nope in container "c"`},
		{name: "sleep 0", handler: v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 0}}},
		{name: "tcpSocket is unsupported", handler: v1.LifecycleHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}},
			wantErr: ErrInvalidHandler, wantMsg: "Cannot run handler: invalid handler: tcpSocket is not supported in lifecycle hooks"},
		{name: "empty", wantErr: ErrInvalidHandler},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(zaptest.NewLogger(t), Deps{Exec: tt.exec})
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			msg, err := r.Run(ctx, pod, withHook(nil, nil), "id1", "127.0.0.1", &tt.handler)
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
			case tt.anyErr || tt.wantMsg != "":
				if err == nil {
					t.Fatal("no error")
				}
			case err != nil:
				t.Fatalf("err %v (%s)", err, msg)
			}
			if tt.wantMsg != "" && msg != tt.wantMsg {
				t.Fatalf("message %q\nwant    %q", msg, tt.wantMsg)
			}
		})
	}
	if ua, _ := gotUA.Load().(string); ua != "kube-lifecycle/1.37" {
		t.Fatalf("User-Agent %q", ua)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

func TestPostStart(t *testing.T) {
	rec := &recorder{}
	r := New(zaptest.NewLogger(t), Deps{Exec: scriptedExec(2, "secret output", nil), Recorder: rec})
	if err := r.PostStart(context.Background(), pod, &v1.Container{Name: "c"}, "id1", "10.42.0.5"); err != nil {
		t.Fatalf("no hook: %v", err)
	}
	c := withHook(&v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"init"}}}, nil)
	err := r.PostStart(context.Background(), pod, c, "id1", "10.42.0.5")
	var he *HookError
	if !errors.Is(err, ErrPostStartHook) || !errors.Is(err, ErrExitCode) || !errors.As(err, &he) || he.Reason != ReasonFailedPostStartHook {
		t.Fatalf("err %v", err)
	}
	if got := rec.list(); len(got) != 1 || got[0] != "Warning FailedPostStartHook PostStartHook failed" {
		t.Fatalf("events %q", got)
	}
}

// preStopCase drives PreStop on a fake clock.
type preStopCase struct {
	name      string
	exec      func(context.Context, string, []string) (int, []byte, error)
	hook      *v1.LifecycleHandler
	grace     time.Duration
	waiters   int           // clock timers to wait for before stepping
	step      time.Duration // then step the clock by this
	want      time.Duration
	wantEvent string
}

func TestPreStop(t *testing.T) {
	sleep := func(s int64) *v1.LifecycleHandler { return &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: s}} }
	execHook := &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}}
	tests := []preStopCase{
		{name: "no hook", grace: 30 * time.Second, want: 30 * time.Second},
		{name: "no hook, tiny grace gets the minimum", grace: time.Second, want: MinimumGracePeriod},
		{name: "sleep counts against grace", hook: sleep(10), grace: 30 * time.Second, waiters: 2, step: 10 * time.Second, want: 20 * time.Second},
		{name: "hook outlives grace", hook: sleep(60), grace: 30 * time.Second, waiters: 2, step: 30 * time.Second, want: MinimumGracePeriod},
		{name: "hanging exec cut at grace", exec: scriptedExec(-1, "", nil), hook: execHook, grace: 5 * time.Second, waiters: 1, step: 5 * time.Second, want: MinimumGracePeriod},
		{name: "failed hook", exec: scriptedExec(1, "", nil), hook: execHook, grace: 30 * time.Second, want: 30 * time.Second,
			wantEvent: "Warning FailedPreStopHook PreStopHook failed"},
		{name: "zero grace skips the hook", exec: scriptedExec(1, "", nil), hook: execHook, grace: 0, want: MinimumGracePeriod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runPreStopCase(t, tt) })
	}
}

func runPreStopCase(t *testing.T, tt preStopCase) {
	checkNoLeaks(t)
	fc := clocktesting.NewFakeClock(t0)
	rec := &recorder{}
	r := New(zaptest.NewLogger(t), Deps{Exec: tt.exec, Recorder: rec, Clock: fc})
	got := make(chan time.Duration, 1)
	go func() {
		got <- r.PreStop(context.Background(), pod, withHook(nil, tt.hook), "id1", "10.42.0.5", tt.grace)
	}()
	if tt.step > 0 {
		deadline := time.Now().Add(waitFor)
		for fc.Waiters() != tt.waiters {
			if time.Now().After(deadline) {
				t.Fatalf("%d clock waiters, want %d", fc.Waiters(), tt.waiters)
			}
			time.Sleep(time.Millisecond)
		}
		fc.Step(tt.step)
	}
	select {
	case d := <-got:
		if d != tt.want {
			t.Fatalf("grace left %v, want %v", d, tt.want)
		}
	case <-time.After(waitFor):
		t.Fatal("PreStop did not return")
	}
	if ev := rec.list(); (tt.wantEvent == "" && len(ev) != 0) || (tt.wantEvent != "" && (len(ev) != 1 || ev[0] != tt.wantEvent)) {
		t.Fatalf("events %q, want %q", ev, tt.wantEvent)
	}
}

func TestPreStopParentCancelled(t *testing.T) {
	checkNoLeaks(t)
	fc := clocktesting.NewFakeClock(t0)
	r := New(zaptest.NewLogger(t), Deps{Clock: fc})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hook := &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 60}}
	if got := r.PreStop(ctx, pod, withHook(nil, hook), "id1", "", 30*time.Second); got != 30*time.Second {
		t.Fatalf("grace left %v", got)
	}
}
