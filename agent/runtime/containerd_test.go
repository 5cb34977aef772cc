package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

var criLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z (stdout|stderr) [FP] .*$`)

func TestLogsAndExitCode(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, true)
	s := p.spec("main", "sh", "-c", "echo hello; echo oops >&2; printf partial; exit 3")
	run(t, r, s)
	st := waitState(t, r, s.ID, StateExited, 20*time.Second)
	if st.ExitCode != 3 || st.FinishedAt.IsZero() || st.StartedAt.IsZero() || st.Name != "main" || st.PodUID != p.uid {
		t.Fatalf("status = %+v", st)
	}
	log := waitLog(t, st.LogPath, "partial", 5*time.Second)
	lines := strings.Split(strings.TrimSpace(log), "\n")
	for _, l := range lines {
		if !criLine.MatchString(l) {
			t.Errorf("not a CRI log line: %q", l)
		}
	}
	for _, want := range []string{" stdout F hello", " stderr F oops", " stdout P partial"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(st.LogPath, "default_"+p.name+"_"+p.uid+"/main/0.log") {
		t.Errorf("log path %s", st.LogPath)
	}
}

// TestLogCompleteOnExit: once the status says exited, the log holds all
// the output (a client reads the log as soon as it sees the pod succeed).
func TestLogCompleteOnExit(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, true)
	for i := range 3 {
		s := p.spec(fmt.Sprintf("burst%d", i), "sh", "-c", "seq 1 20000; echo last-line")
		run(t, r, s)
		st := waitState(t, r, s.ID, StateExited, 20*time.Second)
		b, err := os.ReadFile(st.LogPath)
		if err != nil || !strings.Contains(string(b), " stdout F last-line") {
			t.Fatalf("log read on exit lacks the last line (%d bytes, %v)", len(b), err)
		}
	}
}

func TestSharedNetnsAndHostname(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, true)
	srv := p.spec("web", "httpd", "-f", "-p", "8080", "-h", "/www")
	srv.Image = nginxRef
	run(t, r, srv)
	waitState(t, r, srv.ID, StateRunning, 20*time.Second)
	cli := p.spec("client", "sh", "-c",
		"hostname; for i in $(seq 50); do wget -q -O - http://127.0.0.1:8080/ && exit 0; sleep 0.1; done; exit 1")
	run(t, r, cli)
	st := waitState(t, r, cli.ID, StateExited, 30*time.Second)
	log := waitLog(t, st.LogPath, "hello from orch busybox", 5*time.Second)
	if st.ExitCode != 0 {
		t.Fatalf("client exit %d:\n%s", st.ExitCode, log)
	}
	if !strings.Contains(log, "stdout F "+p.name+"\n") {
		t.Errorf("hostname is not the pod name %s:\n%s", p.name, log)
	}
}

func TestStopGrace(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, true)
	ctx := context.Background()
	// Traps SIGTERM: exits 0 within the grace period.
	polite := p.spec("polite", "sh", "-c", "trap 'echo got-term; exit 0' TERM; echo ready; while true; do sleep 0.1; done")
	// PID 1 without a handler ignores SIGTERM: needs SIGKILL.
	stubborn := p.spec("stubborn", "sleep", "1000")
	run(t, r, polite)
	run(t, r, stubborn)
	waitLog(t, waitState(t, r, polite.ID, StateRunning, 20*time.Second).LogPath, "ready", 10*time.Second)
	waitState(t, r, stubborn.ID, StateRunning, 20*time.Second)

	if err := r.StopContainer(ctx, polite.ID, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	st, _ := r.ContainerStatus(ctx, polite.ID)
	if st.State != StateExited || st.ExitCode != 0 {
		t.Fatalf("polite: %+v", st)
	}
	waitLog(t, st.LogPath, "got-term", 5*time.Second)

	start := time.Now()
	if err := r.StopContainer(ctx, stubborn.ID, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	st, _ = r.ContainerStatus(ctx, stubborn.ID)
	if st.State != StateExited || st.ExitCode != 137 {
		t.Fatalf("stubborn: %+v", st)
	}
	if time.Since(start) < 500*time.Millisecond {
		t.Errorf("SIGKILL before the grace period ended")
	}
	if err := r.StopContainer(ctx, stubborn.ID, time.Second); err != nil {
		t.Errorf("stopping a stopped container: %v", err)
	}
}

func TestExec(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	s := runningSleeper(t, r, "main", true)
	ctx := context.Background()
	var out, errb bytes.Buffer
	code, err := r.Exec(ctx, s.ID, ExecRequest{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 7"},
		Stdout: &out, Stderr: &errb})
	if err != nil || code != 7 || out.String() != "out\n" || errb.String() != "err\n" {
		t.Fatalf("exec = %d, %v, stdout %q, stderr %q", code, err, out.String(), errb.String())
	}
	out.Reset()
	code, err = r.Exec(ctx, s.ID, ExecRequest{Cmd: []string{"cat"}, Stdin: strings.NewReader("from stdin"), Stdout: &out})
	if err != nil || code != 0 || out.String() != "from stdin" {
		t.Fatalf("exec cat = %d, %v, %q", code, err, out.String())
	}
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := r.Exec(tctx, s.ID, ExecRequest{Cmd: []string{"sleep", "100"}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("exec past deadline: %v", err)
	}
	if _, err := r.Exec(ctx, "nope", ExecRequest{Cmd: []string{"true"}}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("exec in missing container: %v", err)
	}
	// Every exec, exited or killed, was deleted: the directories of its
	// FIFO sets are gone (the container's own stdio FIFOs stay).
	entries, err := os.ReadDir(r.fifoDir(s.ID))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			t.Fatalf("an exec's FIFO set left behind: %s", e.Name())
		}
	}
}
