package kubeletapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/agent/runtime"
	"github.com/orch/orch/internal/pki"
)

// testEnv is a kubeletapi server on loopback over a runtime.Fake with one
// running pod "default/web" (containers "app" and "side").
type testEnv struct {
	fake    *runtime.Fake
	base    string // https://127.0.0.1:port
	rest    *rest.Config
	logDir  string
	pod     Pod
	bundle  *pki.Bundle
	stopped chan struct{}
}

// nodePKI is a fresh node certificate bundle for node1 on 127.0.0.1.
func nodePKI(t *testing.T) *pki.Bundle {
	t.Helper()
	b, err := pki.LoadOrCreate(t.TempDir(), pki.Options{Hostname: "node1",
		HostIPs: func() ([]net.IP, error) { return []net.IP{net.ParseIP("127.0.0.1")}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveBearer serves srv on loopback until the test ends and returns a GET
// of a path with token (when not empty) as its bearer token: the status
// and the body.
func serveBearer(t *testing.T, srv *Server, roots *x509.CertPool) func(path, token string) (int, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	return func(path, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+ln.Addr().String()+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	b := nodePKI(t)
	e := &testEnv{fake: runtime.NewFake(), logDir: t.TempDir(), bundle: b, stopped: make(chan struct{})}
	e.fake.ExecFunc = scriptedExec
	e.pod = Pod{UID: "uid-1", IP: "127.0.0.1", Containers: map[string]string{}}
	for _, name := range []string{"app", "side"} {
		e.pod.Containers[name] = e.startContainer(t, name, 0)
	}
	srv, err := New(zaptest.NewLogger(t), Config{
		Runtime: e.fake, LogDir: e.logDir, ServerTLS: b.ServerTLSConfig(), ClientCA: b.CAPool(),
		AllowedClient: func(c *x509.Certificate) bool { return c.Subject.CommonName == "system:apiserver-kubelet-client" },
		PodLookup: func(ns, name string) (Pod, bool) {
			return e.pod, ns == "default" && name == "web"
		},
		FollowPoll: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = srv.Serve(ctx, ln); close(e.stopped) }()
	t.Cleanup(func() { cancel(); <-e.stopped })
	e.base = "https://" + ln.Addr().String()
	e.rest = e.clientConfig(t, "system:apiserver-kubelet-client")
	return e
}

func (e *testEnv) clientConfig(t *testing.T, cn string) *rest.Config {
	cert, key, err := e.bundle.IssueClientCert(cn, []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: e.base, TLSClientConfig: rest.TLSClientConfig{CAData: e.bundle.CAPEM(), CertData: cert, KeyData: key}}
}

// startContainer creates and starts attempt restart of container name.
func (e *testEnv) startContainer(t *testing.T, name string, restart int) string {
	t.Helper()
	id := runtime.ContainerID(e.pod.UID, name, restart)
	logPath := filepath.Join(e.logDir, "default_web_"+e.pod.UID, name, fmt.Sprintf("%d.log", restart))
	ctx := context.Background()
	if err := e.fake.CreateContainer(ctx, runtime.ContainerSpec{ID: id, PodUID: e.pod.UID, PodName: "web",
		PodNamespace: "default", Name: name, RestartCount: restart, LogPath: logPath}); err != nil {
		t.Fatal(err)
	}
	if err := e.fake.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		t.Fatal(err)
	}
	return id
}

// writeLog appends CRI lines "<ts> <stream> <tag> <msg>" to path.
func writeLog(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func criLine(ts time.Time, stream, tag, msg string) string {
	return ts.UTC().Format(time.RFC3339Nano) + " " + stream + " " + tag + " " + msg
}

// scriptedExec is the fake container's shell:
//
//	echo ARGS...   prints ARGS
//	cat            copies stdin to stdout
//	fail N         prints "oops" to stderr and exits N
//	tty            prints "tty" when run with a terminal
func scriptedExec(_ string, req runtime.ExecRequest) (int, error) {
	if len(req.Cmd) == 0 {
		return -1, errors.New("empty command")
	}
	out := req.Stdout
	if out == nil {
		out = io.Discard
	}
	switch req.Cmd[0] {
	case "echo":
		fmt.Fprintln(out, strings.Join(req.Cmd[1:], " "))
	case "cat":
		if req.Stdin != nil {
			_, _ = io.Copy(out, req.Stdin)
		}
	case "fail":
		if req.Stderr != nil {
			fmt.Fprintln(req.Stderr, "oops")
		}
		var n int
		fmt.Sscanf(req.Cmd[1], "%d", &n)
		return n, nil
	case "tty":
		if req.TTY {
			fmt.Fprint(out, "tty\r\n")
		}
	default:
		return -1, fmt.Errorf("%s: not found", req.Cmd[0])
	}
	return 0, nil
}

var _ = bytes.NewBuffer

func renameFile(from, to string) error { return os.Rename(from, to) }
