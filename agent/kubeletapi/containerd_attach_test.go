package kubeletapi

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/remotecommand"

	"github.com/orch/orch/agent/runtime"
)

// startReal creates and starts a busybox container of pod uid on rt.
func startReal(t *testing.T, rt *runtime.Containerd, uid, name string, stdin, once, tty bool, script string) string {
	t.Helper()
	id := runtime.ContainerID(uid, name, 0)
	spec := runtime.ContainerSpec{ID: id, PodUID: uid, PodName: "web", PodNamespace: "default", Name: name,
		Image: "docker.io/library/busybox:1.36", Command: []string{"sh", "-c", script}, Stdin: stdin, StdinOnce: once, TTY: tty}
	ctx := context.Background()
	if err := rt.CreateContainer(ctx, spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.RemoveContainer(context.Background(), id) })
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	return id
}

// waitOut writes line to in until out contains want (a shell prints its
// answer per line read).
func waitOut(t *testing.T, in io.Writer, line string, out *lockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in output %q", want, out.String())
		}
		_, _ = io.WriteString(in, line)
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRealContainerdAttachAndResize attaches with client-go to real
// containers over SPDY and WebSocket (stdin, stdinOnce, TTY) and resizes
// the terminal of attach -t and exec -t sessions.
func TestRealContainerdAttachAndResize(t *testing.T) {
	rt, _ := realRuntime(t)
	uid := "uid-" + randHex(4)
	pod := Pod{UID: uid, IP: "127.0.0.1", Containers: map[string]string{}}
	pod.Containers["echo"] = startReal(t, rt, uid, "echo", true, false, false, `while read l; do echo got:$l; echo err:$l >&2; done`)
	pod.Containers["term"] = startReal(t, rt, uid, "term", true, false, true, `while read l; do echo size=$(stty size); done`)
	pod.Containers["once"] = startReal(t, rt, uid, "once", true, true, false, `while read l; do echo once:$l; done; echo bye`)
	e := serveRuntime(t, rt, pod)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	for _, kind := range []executorKind{viaSPDY, viaWebSocket} {
		// plain attach: input in, stdout and stderr out; the end of input detaches
		pr, pw := io.Pipe()
		var out, errOut lockedBuffer
		done := make(chan error, 1)
		go func() {
			done <- newExecutor(t, e.rest, kind, attachURL(e.base, "/attach/default/web/echo", true, false)).
				StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: pr, Stdout: &out, Stderr: &errOut})
		}()
		waitOut(t, pw, string(kind)+"\n", &out, "got:"+string(kind))
		waitOut(t, pw, string(kind)+"\n", &errOut, "err:"+string(kind))
		_ = pw.Close()
		if err := <-done; err != nil {
			t.Fatalf("%s attach: %v", kind, err)
		}

		// attach -t with resizes
		pr, pw = io.Pipe()
		q := make(sizeQueue, 2)
		var tout lockedBuffer
		go func() {
			done <- newExecutor(t, e.rest, kind, attachURL(e.base, "/attach/default/web/term", true, true)).
				StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: pr, Stdout: &tout, Tty: true, TerminalSizeQueue: q})
		}()
		q <- remotecommand.TerminalSize{Width: 80, Height: 24}
		waitOut(t, pw, "x\n", &tout, "size=24 80")
		q <- remotecommand.TerminalSize{Width: 132, Height: 43}
		waitOut(t, pw, "x\n", &tout, "size=43 132")
		_ = pw.Close()
		close(q)
		if err := <-done; err != nil {
			t.Fatalf("%s attach -t: %v", kind, err)
		}

		// exec -t: the first size is the initial one, later ones resize
		q = make(sizeQueue, 2)
		q <- remotecommand.TerminalSize{Width: 120, Height: 40}
		var eout bytes.Buffer
		u := execURL(e.base, "/exec/default/web/echo", []string{"sh", "-c", "stty size"}, false, true)
		if err := newExecutor(t, e.rest, kind, u).StreamWithContext(ctx,
			remotecommand.StreamOptions{Stdout: &eout, Tty: true, TerminalSizeQueue: q}); err != nil || strings.TrimSpace(eout.String()) != "40 120" {
			t.Fatalf("%s exec -t stty size: %q %v", kind, eout.String(), err)
		}
		close(q)
	}

	// stdinOnce: the first client's end of input closes the container's
	// stdin; the attach lasts until the container's output ends
	var out lockedBuffer
	err := newExecutor(t, e.rest, viaWebSocket, attachURL(e.base, "/attach/default/web/once", true, false)).
		StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("a\nb\n"), Stdout: &out, Stderr: io.Discard})
	if err != nil || out.String() != "once:a\nonce:b\nbye\n" {
		t.Fatalf("stdinOnce attach: %q %v", out.String(), err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := rt.ContainerStatus(ctx, pod.Containers["once"])
		if err == nil && st.State == runtime.StateExited {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stdinOnce container did not exit: %+v %v", st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
