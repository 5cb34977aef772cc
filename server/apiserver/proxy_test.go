package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/utils/exec"

	"github.com/orch/orch/agent/kubeletapi"
	agentruntime "github.com/orch/orch/agent/runtime"
	"github.com/orch/orch/internal/pki"
)

// proxyEnv is an API server whose Node "node1" points at a kubeletapi
// server on loopback running pod default/web (container "app") on a
// runtime.Fake.
type proxyEnv struct {
	*apiEnv
	fake    *agentruntime.Fake
	appID   string
	logPath string
	rest    *rest.Config
	cs      kubernetes.Interface
}

func newProxyEnv(t *testing.T) *proxyEnv {
	t.Helper()
	b, err := pki.LoadOrCreate(t.TempDir(), pki.Options{Hostname: "node1",
		HostIPs: func() ([]net.IP, error) { return []net.IP{net.ParseIP("127.0.0.1")}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := b.IssueClientCert("system:apiserver-kubelet-client", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	clientTLS := &tls.Config{RootCAs: b.CAPool(), Certificates: []tls.Certificate{cert}}
	e := &proxyEnv{apiEnv: newAPIEnv(t, 100, func(c *Config) { c.KubeletClientTLS = clientTLS })}
	e.rest = &rest.Config{Host: e.srv.URL, BearerToken: "admin"}
	if e.cs, err = kubernetes.NewForConfig(e.rest); err != nil {
		t.Fatal(err)
	}
	port := e.startKubelet(t, b)
	e.createNamespace("default")
	e.must(201, "POST", "/api/v1/nodes", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"node1"}}`)
	e.must(200, "PATCH", "/api/v1/nodes/node1/status", fmt.Sprintf(`{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":%d}}}}`, port),
		"Content-Type: application/merge-patch+json")
	e.must(201, "POST", "/api/v1/namespaces/default/pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"nodeName":"node1","containers":[{"name":"app","image":"busybox"}]}}`)
	e.must(201, "POST", "/api/v1/namespaces/default/pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pending"},"spec":{"containers":[{"name":"app","image":"busybox"}]}}`)
	return e
}

// startKubelet runs the node API on loopback and returns its port.
func (e *proxyEnv) startKubelet(t *testing.T, b *pki.Bundle) int {
	t.Helper()
	e.fake = agentruntime.NewFake()
	e.fake.ExecFunc = func(_ string, req agentruntime.ExecRequest) (int, error) {
		switch req.Cmd[0] {
		case "cat":
			_, _ = io.Copy(req.Stdout, req.Stdin)
		case "exit":
			return strconv.Atoi(req.Cmd[1])
		default:
			fmt.Fprintln(req.Stdout, strings.Join(req.Cmd, " "))
		}
		return 0, nil
	}
	e.appID = agentruntime.ContainerID("uid", "app", 0)
	e.logPath = filepath.Join(t.TempDir(), "0.log")
	ctx := context.Background()
	if err := e.fake.CreateContainer(ctx, agentruntime.ContainerSpec{ID: e.appID, PodUID: "uid", Name: "app", LogPath: e.logPath}); err != nil {
		t.Fatal(err)
	}
	if err := e.fake.StartContainer(ctx, e.appID); err != nil {
		t.Fatal(err)
	}
	k, err := kubeletapi.New(zaptest.NewLogger(t), kubeletapi.Config{
		Runtime: e.fake, ServerTLS: b.ServerTLSConfig(), ClientCA: b.CAPool(), FollowPoll: 20 * time.Millisecond,
		AllowedClient: func(c *x509.Certificate) bool { return c.Subject.CommonName == "system:apiserver-kubelet-client" },
		PodLookup: func(ns, name string) (kubeletapi.Pod, bool) {
			return kubeletapi.Pod{UID: "uid", IP: "127.0.0.1", Containers: map[string]string{"app": e.appID}}, ns == "default" && name == "web"
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = k.Serve(sctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().(*net.TCPAddr).Port
}

func (e *proxyEnv) writeLog(t *testing.T, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(e.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		fmt.Fprintf(f, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), l)
	}
}

func TestProxyPodLogs(t *testing.T) {
	e := newProxyEnv(t)
	e.writeLog(t, "one", "two", "three")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tail := int64(2)
	got, err := e.cs.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
	if err != nil || string(got) != "two\nthree\n" {
		t.Fatalf("tail: %q %v", got, err)
	}
	stream, err := e.cs.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{Follow: true, Container: "app"}).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	rd := bufio.NewReader(stream)
	for _, want := range []string{"one", "two", "three"} {
		if l, err := rd.ReadString('\n'); err != nil || l != want+"\n" {
			t.Fatalf("follow: %q %v", l, err)
		}
	}
	e.writeLog(t, "four")
	if l, err := rd.ReadString('\n'); err != nil || l != "four\n" {
		t.Fatalf("follow new line: %q %v", l, err)
	}
	if err := e.fake.Exit(e.appID, 0, false); err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(rd); err != nil || len(rest) != 0 {
		t.Fatalf("after exit: %q %v", rest, err)
	}
}

func TestProxyErrors(t *testing.T) {
	e := newProxyEnv(t)
	tests := []struct {
		path string
		code int
		msg  string
	}{
		{"/api/v1/namespaces/default/pods/pending/log", 400, "pod pending does not have a host assigned"},
		{"/api/v1/namespaces/default/pods/web/log?container=nope", 400, "container nope is not valid for pod web"},
		{"/api/v1/namespaces/default/pods/web/log?previous=true", 400, "previous terminated container"},
		{"/api/v1/namespaces/default/pods/gone/log", 404, `pods \"gone\" not found`},
		{"/api/v1/namespaces/default/pods/web/exec?stdout=true", 400, "you must specify at least one command"},
	}
	for _, tt := range tests {
		r := e.do("GET", tt.path, "")
		if r.code != tt.code || !strings.Contains(string(r.body), tt.msg) {
			t.Errorf("%s: %d %s", tt.path, r.code, r.body)
		}
	}
	// a reader may not open a WebSocket exec ("get" alone is not enough)
	r := e.do("GET", "/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=true", "", "Authorization: Bearer reader")
	if r.code != http.StatusForbidden {
		t.Errorf("reader exec: %d %s", r.code, r.body)
	}
	plain := newAPIEnv(t, 100, nil)
	if r := plain.do("GET", "/api/v1/namespaces/default/pods/web/log", ""); r.code != http.StatusServiceUnavailable {
		t.Errorf("no kubelet client: %d %s", r.code, r.body)
	}
}

func (e *proxyEnv) subresourceURL(sub string, params *corev1.PodExecOptions) *url.URL {
	req := e.cs.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name("web").SubResource(sub)
	if params != nil {
		req = req.VersionedParams(params, scheme.ParameterCodec)
	}
	return req.URL()
}

func TestProxyExec(t *testing.T) {
	e := newProxyEnv(t)
	for _, kind := range []string{"spdy", "websocket"} {
		t.Run(kind, func(t *testing.T) {
			run := func(cmd []string, stdin string) (string, error) {
				u := e.subresourceURL("exec", &corev1.PodExecOptions{Container: "app", Command: cmd,
					Stdin: stdin != "", Stdout: true, Stderr: true})
				var ex remotecommand.Executor
				var err error
				if kind == "spdy" {
					ex, err = remotecommand.NewSPDYExecutor(e.rest, "POST", u)
				} else {
					ex, err = remotecommand.NewWebSocketExecutor(e.rest, "GET", u.String())
				}
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				opts := remotecommand.StreamOptions{Stdout: &out, Stderr: io.Discard}
				if stdin != "" {
					opts.Stdin = strings.NewReader(stdin)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				err = ex.StreamWithContext(ctx, opts)
				return out.String(), err
			}
			if out, err := run([]string{"sh", "-c", "echo hi"}, ""); err != nil || out != "sh -c echo hi\n" {
				t.Fatalf("exec: %q %v", out, err)
			}
			if out, err := run([]string{"cat"}, "piped\n"); err != nil || out != "piped\n" {
				t.Fatalf("stdin: %q %v", out, err)
			}
			var exitErr utilexec.ExitError
			if _, err := run([]string{"exit", "7"}, ""); !errors.As(err, &exitErr) || exitErr.ExitStatus() != 7 {
				t.Fatalf("exit code: %v", err)
			}
		})
	}
}

func TestProxyPortForward(t *testing.T) {
	e := newProxyEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	remote := ln.Addr().(*net.TCPAddr).Port
	u := e.subresourceURL("portforward", nil)
	for _, kind := range []string{"spdy", "websocket"} {
		t.Run(kind, func(t *testing.T) {
			forwardEcho(t, e.rest, kind, u, remote)
		})
	}
}

// forwardEcho forwards a local port through the API server to remote (an
// echo server) and checks a round trip.
func forwardEcho(t *testing.T, cfg *rest.Config, kind string, u *url.URL, remote int) {
	t.Helper()
	var d httpstream.Dialer
	if kind == "websocket" {
		wd, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
		if err != nil {
			t.Fatal(err)
		}
		d = wd
	} else {
		rt, up, err := spdy.RoundTripperFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d = spdy.NewDialer(up, &http.Client{Transport: rt}, http.MethodPost, u)
	}
	stop, ready := make(chan struct{}), make(chan struct{})
	pf, err := portforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(remote)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- pf.ForwardPorts() }()
	defer func() { close(stop); <-errc }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("forward: %v", err)
	}
	ports, err := pf.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "ping\n")
	if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || l != "ping\n" {
		t.Fatalf("echo: %q %v", l, err)
	}
}
