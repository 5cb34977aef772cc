package kubeletapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

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
