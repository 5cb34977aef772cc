package kubeletapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/remotecommand"

	"github.com/orch/orch/agent/runtime"
)

// lockedBuffer is a bytes.Buffer safe for the stream's writer and a poller.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sizeQueue is a remotecommand.TerminalSizeQueue fed by a channel.
type sizeQueue chan remotecommand.TerminalSize

func (q sizeQueue) Next() *remotecommand.TerminalSize {
	s, ok := <-q
	if !ok {
		return nil
	}
	return &s
}

func attachURL(base, path string, stdin, tty bool) *url.URL {
	q := url.Values{"output": {"1"}}
	if !tty {
		q.Set("error", "1")
	}
	if stdin {
		q.Set("input", "1")
	}
	if tty {
		q.Set("tty", "1")
	}
	u, _ := url.Parse(base + path + "?" + q.Encode())
	return u
}

// TestAttachStreams checks the attach wiring over a fake runtime: the
// client's streams and terminal sizes reach the runtime and its output and
// status reach the client, over SPDY and WebSocket.
func TestAttachStreams(t *testing.T) {
	e := newTestEnv(t)
	e.fake.AttachFunc = func(_ string, req runtime.AttachRequest) error {
		// Stdin is read while waiting for the terminal size, as the real
		// runtime copies it: one WebSocket carries every channel, so a
		// session that left stdin unread would never see the resize
		// message queued behind it.
		in := make(chan []byte, 1)
		go func() { b, _ := io.ReadAll(req.Stdin); in <- b }()
		if req.TTY {
			s := <-req.Resize
			fmt.Fprintf(req.Stdout, "size %dx%d\r\n", s.Width, s.Height)
		}
		if req.Stderr != nil {
			fmt.Fprintln(req.Stderr, "to stderr")
		}
		_, err := req.Stdout.Write(<-in)
		return err
	}
	for _, kind := range []executorKind{viaSPDY, viaWebSocket} {
		for _, tty := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tty=%v", kind, tty), func(t *testing.T) {
				var out, errOut bytes.Buffer
				opts := remotecommand.StreamOptions{Stdin: strings.NewReader("typed\n"), Stdout: &out, Tty: tty}
				want, wantErr := "typed\n", "to stderr\n"
				if tty {
					q := make(sizeQueue, 1)
					q <- remotecommand.TerminalSize{Width: 90, Height: 33}
					close(q)
					opts.TerminalSizeQueue = q
					want, wantErr = "size 90x33\r\ntyped\n", ""
				} else {
					opts.Stderr = &errOut
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				err := newExecutor(t, e.rest, kind, attachURL(e.base, "/attach/default/web/app", true, tty)).StreamWithContext(ctx, opts)
				if err != nil || out.String() != want || errOut.String() != wantErr {
					t.Fatalf("attach: err %v stdout %q stderr %q", err, out.String(), errOut.String())
				}
			})
		}
	}
	// a container that does not run answers with an error status
	if err := e.fake.Exit(e.pod.Containers["side"], 0, false); err != nil {
		t.Fatal(err)
	}
	err := newExecutor(t, e.rest, viaWebSocket, attachURL(e.base, "/attach/default/web/side", false, false)).
		StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("attach to an exited container: %v", err)
	}
}
