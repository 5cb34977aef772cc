package kubeletapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/utils/exec"
)

type executorKind string

const (
	viaSPDY      executorKind = "spdy"
	viaWebSocket executorKind = "websocket"
)

func newExecutor(t *testing.T, cfg *rest.Config, kind executorKind, u *url.URL) remotecommand.Executor {
	t.Helper()
	var ex remotecommand.Executor
	var err error
	if kind == viaSPDY {
		ex, err = remotecommand.NewSPDYExecutor(cfg, http.MethodPost, u)
	} else {
		ex, err = remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, u.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func execURL(base, path string, cmd []string, stdin, tty bool) *url.URL {
	q := url.Values{"command": cmd, "output": {"1"}}
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

type execCase struct {
	name     string
	cmd      []string
	stdin    string
	tty      bool
	stdout   string
	stderr   string
	exitCode int // -1 = an error other than an exit code
}

var execCases = []execCase{
	{name: "echo", cmd: []string{"echo", "hello", "world"}, stdout: "hello world\n"},
	{name: "stdin", cmd: []string{"cat"}, stdin: "from stdin\n", stdout: "from stdin\n"},
	{name: "exit code", cmd: []string{"fail", "3"}, stderr: "oops\n", exitCode: 3},
	{name: "tty", cmd: []string{"tty"}, tty: true, stdout: "tty\r\n"},
	{name: "runtime error", cmd: []string{"nosuch"}, exitCode: -1},
}

// runExec runs c through an executor and checks output and exit code.
func runExec(t *testing.T, ex remotecommand.Executor, c execCase) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &stdout, Tty: c.tty}
	if !c.tty {
		opts.Stderr = &stderr
	}
	if c.stdin != "" {
		opts.Stdin = strings.NewReader(c.stdin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := ex.StreamWithContext(ctx, opts)
	var exitErr utilexec.ExitError
	switch {
	case c.exitCode == 0 && err != nil:
		t.Fatalf("exec: %v", err)
	case c.exitCode > 0 && (!errors.As(err, &exitErr) || exitErr.ExitStatus() != c.exitCode):
		t.Fatalf("exec: err %v, want exit code %d", err, c.exitCode)
	case c.exitCode < 0 && (err == nil || errors.As(err, &exitErr)):
		t.Fatalf("exec: err %v, want a runtime error", err)
	}
	if stdout.String() != c.stdout || stderr.String() != c.stderr {
		t.Fatalf("stdout %q stderr %q, want %q %q", stdout.String(), stderr.String(), c.stdout, c.stderr)
	}
}

func TestExec(t *testing.T) {
	e := newTestEnv(t)
	for _, kind := range []executorKind{viaSPDY, viaWebSocket} {
		for _, c := range execCases {
			t.Run(string(kind)+"/"+c.name, func(t *testing.T) {
				u := execURL(e.base, "/exec/default/web/app", c.cmd, c.stdin != "", c.tty)
				runExec(t, newExecutor(t, e.rest, kind, u), c)
			})
		}
	}
}

func TestExecErrors(t *testing.T) {
	e := newTestEnv(t)
	for _, kind := range []executorKind{viaSPDY, viaWebSocket} {
		for _, path := range []string{"/exec/default/web/nope", "/exec/default/gone/app", "/attach/default/web/nope"} {
			u := execURL(e.base, path, []string{"echo"}, false, false)
			err := newExecutor(t, e.rest, kind, u).StreamWithContext(context.Background(),
				remotecommand.StreamOptions{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
			if err == nil {
				t.Errorf("%s %s: no error", kind, path)
				continue
			}
			t.Logf("%s %s: %v", kind, path, err)
		}
	}
}

// TestExecPreV4WebSocket: the pre-v4 channel protocols (channel.k8s.io,
// which the conformance spec 'remote command execution over websockets'
// dials, and base64.channel.k8s.io) stream the output, and the error
// channel carries only a failure's message.
func TestExecPreV4WebSocket(t *testing.T) {
	e := newTestEnv(t)
	tc, err := rest.TLSConfigFor(e.rest)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		proto           string
		cmd             []string
		stdout, errChan string
	}{
		{"channel.k8s.io", []string{"echo", "remote execution test"}, "remote execution test\n", ""},
		{"base64.channel.k8s.io", []string{"echo", "remote execution test"}, "remote execution test\n", ""},
		{"channel.k8s.io", []string{"fail", "3"}, "", "command terminated with non-zero exit code"},
	} {
		u := execURL(e.base, "/exec/default/web/app", c.cmd, false, false)
		u.Scheme = "wss"
		d := gwebsocket.Dialer{TLSClientConfig: tc, Subprotocols: []string{c.proto}, HandshakeTimeout: 10 * time.Second}
		conn, resp, err := d.Dial(u.String(), http.Header{"Origin": {"http://localhost"}})
		if err != nil {
			t.Fatalf("%s: dial: %v (%v)", c.proto, err, resp)
		}
		chans := readChannels(t, conn, c.proto == "base64.channel.k8s.io")
		if chans[1] != c.stdout || !strings.Contains(chans[3], c.errChan) || c.errChan == "" && chans[3] != "" {
			t.Errorf("%s %s: channels %q", c.proto, c.cmd, chans)
		}
	}
}

// readChannels reads a channel WebSocket until it closes: the data of
// each channel number, concatenated.
func readChannels(t *testing.T, conn *gwebsocket.Conn, b64 bool) map[byte]string {
	t.Helper()
	defer conn.Close()
	out := map[byte]string{}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return out
		}
		if len(msg) == 0 {
			continue
		}
		ch, data := msg[0], msg[1:]
		if b64 {
			ch -= '0'
			if data, err = base64.StdEncoding.DecodeString(string(data)); err != nil {
				t.Fatalf("base64 frame: %v", err)
			}
		}
		out[ch] += string(data)
	}
}
