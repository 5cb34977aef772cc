package runtime

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls buf until it contains substr.
func waitBuf(t *testing.T, buf *syncBuffer, substr string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(buf.String(), substr) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in attached output:\n%q", substr, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// attachAsync runs Attach in the background; the returned channel gets its
// error.
func attachAsync(r *Containerd, id string, req AttachRequest) <-chan error {
	ch := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ch <- r.Attach(ctx, id, req)
	}()
	return ch
}

func TestAttachStdinOnce(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, false)
	s := p.spec("sh", "sh", "-c", `echo ready; while read l; do echo got:$l; echo err:$l >&2; done; echo bye`)
	s.Stdin, s.StdinOnce = true, true
	run(t, r, s)
	st := waitState(t, r, s.ID, StateRunning, 20*time.Second)
	waitLog(t, st.LogPath, "ready", 10*time.Second)

	var out, errOut syncBuffer
	done := attachAsync(r, s.ID, AttachRequest{Stdin: strings.NewReader("a\nb\n"), Stdout: &out, Stderr: &errOut})
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("attach did not end after stdin closed and the container exited")
	}
	if out.String() != "got:a\ngot:b\nbye\n" || errOut.String() != "err:a\nerr:b\n" {
		t.Fatalf("attached stdout %q stderr %q", out.String(), errOut.String())
	}
	waitState(t, r, s.ID, StateExited, 10*time.Second)
	log := waitLog(t, st.LogPath, "stdout F bye", 5*time.Second)
	for _, want := range []string{"stdout F ready", "stdout F got:a", "stderr F err:b"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if err := r.Attach(context.Background(), s.ID, AttachRequest{Stdout: io.Discard}); !errors.Is(err, ErrNotAttachable) {
		t.Fatalf("attach to an exited container: %v", err)
	}
}

func TestAttachTTYResize(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, false)
	s := p.spec("term", "sh", "-c", `while read l; do echo size=$(stty size); done`)
	s.Stdin, s.StdinOnce, s.TTY = true, true, true
	run(t, r, s)
	waitState(t, r, s.ID, StateRunning, 20*time.Second)

	for i, sz := range []TerminalSize{{Width: 80, Height: 24}, {Width: 132, Height: 43}} {
		pr, pw := io.Pipe()
		resize := make(chan TerminalSize, 1)
		var out syncBuffer
		done := attachAsync(r, s.ID, AttachRequest{Stdin: pr, Stdout: &out, Stderr: io.Discard, TTY: true, Resize: resize})
		resize <- sz
		want := "size=" + itoa(int(sz.Height)) + " " + itoa(int(sz.Width))
		// the resize is applied asynchronously: ask until the shell sees it
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("attach %d: no %q in %q", i, want, out.String())
			}
			_, _ = pw.Write([]byte("x\n"))
			time.Sleep(100 * time.Millisecond)
		}
		// a TTY attach with stdinOnce detaches when its input ends; the
		// container keeps running
		_ = pw.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("attach did not end with its input")
		}
		if st, _ := r.ContainerStatus(context.Background(), s.ID); st.State != StateRunning {
			t.Fatalf("container state %s after detach", st.State)
		}
	}
}

func TestExecTTYResize(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	s := runningSleeper(t, r, "box", false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// the first size is the process's initial size
	resize := make(chan TerminalSize, 1)
	resize <- TerminalSize{Width: 120, Height: 40}
	var out bytes.Buffer
	code, err := r.Exec(ctx, s.ID, ExecRequest{Cmd: []string{"sh", "-c", "stty size"}, Stdout: &out, TTY: true, Resize: resize})
	if err != nil || code != 0 || strings.TrimSpace(out.String()) != "40 120" {
		t.Fatalf("exec stty size: %q code %d err %v", out.String(), code, err)
	}

	// later sizes resize the running process's terminal
	pr, pw := io.Pipe()
	resize = make(chan TerminalSize, 1)
	resize <- TerminalSize{Width: 100, Height: 30}
	var out2 syncBuffer
	errCh := make(chan error, 1)
	go func() {
		_, err := r.Exec(ctx, s.ID, ExecRequest{Cmd: []string{"sh", "-c", "while read l; do echo size=$(stty size); done"},
			Stdin: pr, Stdout: &out2, TTY: true, Resize: resize})
		errCh <- err
	}()
	_, _ = pw.Write([]byte("x\n"))
	waitBuf(t, &out2, "size=30 100")
	resize <- TerminalSize{Width: 70, Height: 20}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out2.String(), "size=20 70") {
		if time.Now().After(deadline) {
			t.Fatalf("no resize: %q", out2.String())
		}
		_, _ = pw.Write([]byte("x\n"))
		time.Sleep(100 * time.Millisecond)
	}
	_ = pw.Close()
	if err := <-errCh; err != nil {
		t.Fatal(err)
	}
}

func TestAttachFIFOsRemoved(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, false)
	s := p.spec("gone", "sh", "-c", "read x; echo $x")
	s.Stdin = true
	run(t, r, s)
	waitState(t, r, s.ID, StateRunning, 20*time.Second)
	if _, err := os.Stat(r.fifoDir(s.ID) + "/stdin"); err != nil {
		t.Fatalf("stdin fifo: %v", err)
	}
	if err := r.RemoveContainer(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.fifoDir(s.ID)); !os.IsNotExist(err) {
		t.Fatalf("fifo dir left after remove: %v", err)
	}
}
