package apiserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	agentruntime "github.com/orch/orch/agent/runtime"
)

// TestKubectlPodStreams runs a real kubectl (path in $ORCH_KUBECTL; skipped
// when unset) for logs, exec, attach and port-forward through the API server
// to a node API over a fake runtime.
func TestKubectlPodStreams(t *testing.T) {
	bin := os.Getenv("ORCH_KUBECTL")
	if bin == "" {
		t.Skip("set ORCH_KUBECTL to a kubectl binary to run")
	}
	e := newProxyEnv(t)
	tlsSrv := httptest.NewTLSServer(e.s.Handler())
	t.Cleanup(tlsSrv.Close)
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: true\n    server: " + tlsSrv.URL +
		"\nusers:\n- name: u\n  user:\n    token: admin\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: default\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := func(stdin string, args ...string) *exec.Cmd {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		t.Cleanup(cancel)
		cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		return cmd
	}
	run := func(wantCode int, stdin, want string, args ...string) {
		t.Helper()
		out, err := kubectl(stdin, args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		t.Logf("kubectl %s -> %d:\n%s", strings.Join(args, " "), code, out)
		if code != wantCode || !strings.Contains(string(out), want) {
			t.Fatalf("kubectl %s: exit %d (want %d), output %q lacks %q", strings.Join(args, " "), code, wantCode, out, want)
		}
	}
	e.must(200, "PATCH", "/api/v1/namespaces/default/pods/web/status", `{"status":{"phase":"Running","podIP":"127.0.0.1"}}`,
		"Content-Type: application/merge-patch+json")
	e.writeLog(t, "one", "two", "three")
	run(0, "", "two\nthree\n", "logs", "web", "--tail=2")
	run(0, "", "one\ntwo\nthree\n", "logs", "web", "-c", "app", "--since=1h")
	run(0, "", "Z three\n", "logs", "pod/web", "--timestamps", "--tail=1")
	run(1, "", "previous terminated container", "logs", "web", "--previous")
	run(1, "", "does not have a host assigned", "logs", "pending")
	run(0, "", "sh -c echo hi\n", "exec", "web", "--", "sh", "-c", "echo hi")
	run(0, "piped\n", "piped\n", "exec", "-i", "web", "--", "cat")
	run(0, "tty\n", "tty\n", "exec", "-it", "web", "--", "cat")
	run(7, "", "command terminated with exit code 7", "exec", "web", "--", "exit", "7")
	e.fake.AttachFunc = func(_ string, req agentruntime.AttachRequest) error {
		_, err := io.Copy(req.Stdout, req.Stdin)
		return err
	}
	run(0, "attached\n", "attached\n", "attach", "-i", "web")
	echo := strconv.Itoa(echoListener(t))
	kubectlPortForward(t, kubectl("", "port-forward", "pod/web", "0:"+echo))
	// the SPDY paths kubectl falls back to
	spdyExec := kubectl("piped\n", "exec", "-i", "web", "--", "cat")
	spdyExec.Env = append(os.Environ(), "KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false")
	if out, err := spdyExec.CombinedOutput(); err != nil || string(out) != "piped\n" {
		t.Fatalf("SPDY exec: %q %v", out, err)
	}
	spdyPF := kubectl("", "port-forward", "pod/web", "0:"+echo)
	spdyPF.Env = append(os.Environ(), "KUBECTL_PORT_FORWARD_WEBSOCKETS=false")
	kubectlPortForward(t, spdyPF)
	// follow ends when the container exits
	follow := kubectl("", "logs", "-f", "web")
	out, _ := follow.StdoutPipe()
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(out)
	for _, want := range []string{"one", "two", "three"} {
		if l, err := rd.ReadString('\n'); err != nil || l != want+"\n" {
			t.Fatalf("logs -f: %q %v", l, err)
		}
	}
	e.writeLog(t, "four")
	if l, err := rd.ReadString('\n'); err != nil || l != "four\n" {
		t.Fatalf("logs -f new line: %q %v", l, err)
	}
	_ = e.fake.Exit(e.appID, 0, false)
	rest, _ := io.ReadAll(rd)
	if err := follow.Wait(); err != nil || len(rest) != 0 {
		t.Fatalf("logs -f after exit: %v %q", err, rest)
	}
}

func echoListener(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

var forwardingRE = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+)`)

// kubectlPortForward starts `kubectl port-forward`, talks through it twice and stops it.
func kubectlPortForward(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	var port string
	for port == "" && sc.Scan() {
		t.Logf("port-forward: %s", sc.Text())
		if m := forwardingRE.FindStringSubmatch(sc.Text()); m != nil {
			port = m[1]
		}
	}
	if port == "" {
		t.Fatal("kubectl port-forward printed no local port")
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "ping %d\n", i)
		l, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil || l != fmt.Sprintf("ping %d\n", i) {
			t.Fatalf("through kubectl port-forward: %q %v", l, err)
		}
	}
}
