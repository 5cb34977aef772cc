package integration

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orch/orch/test/testutil"
)

func init() { register("kubectl-embedded", testEmbeddedKubectl) }

// testEmbeddedKubectl runs the kubectl built into orch (issue 12) against the
// server: as `orch kubectl …`, through a `kubectl` symlink to the binary,
// with kubectl's own flags passed through untouched, and with kubectl's exit
// status on errors.
func testEmbeddedKubectl(t *testing.T, s *testutil.Server) {
	bin := testutil.Binary(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "kubectl")
	must(t, os.Symlink(bin, link), "symlink")
	// A HOME of our own keeps kubectl's discovery cache out of the real one
	// (and ~/.kube/config out of the picture).
	env := append(envWithout("KUBECONFIG", "HOME"), "HOME="+dir)
	withKC := append(env[:len(env):len(env)], "KUBECONFIG="+s.Kubeconfig)

	run := func(env []string, name string, args ...string) (string, string, error) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	for _, tc := range []struct {
		name string
		env  []string
		argv []string
	}{
		{"orch kubectl, KUBECONFIG", withKC, []string{bin, "kubectl", "get", "namespaces", "-o", "name"}},
		{"kubectl symlink, KUBECONFIG", withKC, []string{link, "get", "namespaces", "-o", "name"}},
		{"orch kubectl --kubeconfig", env, []string{bin, "kubectl", "--kubeconfig", s.Kubeconfig,
			"get", "namespaces", "-o", "name"}},
		{"kubectl symlink --kubeconfig=", env, []string{link, "--kubeconfig=" + s.Kubeconfig,
			"get", "namespaces", "-o", "name"}},
	} {
		out, stderr, err := run(tc.env, tc.argv[0], tc.argv[1:]...)
		if err != nil {
			t.Errorf("%s: %q: %v\nstderr: %s", tc.name, tc.argv, err, stderr)
			continue
		}
		for _, want := range []string{"namespace/default\n", "namespace/kube-system\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q printed\n%s\nwant it to contain %q", tc.name, tc.argv, out, want)
			}
		}
	}

	// kubectl's flags reach kubectl, not urfave: -o jsonpath and -n.
	out, stderr, err := run(withKC, bin, "kubectl", "-n", "kube-system", "get", "namespace", "default",
		"-o", "jsonpath={.metadata.name}")
	if err != nil || out != "default" {
		t.Errorf("orch kubectl get namespace default -o jsonpath: out %q, err %v, stderr %s", out, err, stderr)
	}
	// Its text/template runs (orch's builds swap its method lookup, see
	// scripts/lib/go-build-flags.sh): -o go-template, and explain's
	// templates, which call GVR.String.
	out, stderr, err = run(withKC, bin, "kubectl", "get", "namespace", "default",
		"-o", `go-template={{.metadata.name}}/{{len .metadata.labels}}`)
	if err != nil || out != "default/1" {
		t.Errorf("orch kubectl get namespace default -o go-template: out %q, err %v, stderr %s", out, err, stderr)
	}
	out, stderr, err = run(withKC, bin, "kubectl", "explain", "configmap.data")
	if err != nil || !strings.Contains(out, "KIND:       ConfigMap") || !strings.Contains(out, "FIELD: data") {
		t.Errorf("orch kubectl explain configmap.data: out %q, err %v, stderr %s", out, err, stderr)
	}
	out, stderr, err = run(withKC, bin, "kubectl", "explain", "nosuchkind")
	if err == nil || !strings.Contains(stderr, "nosuchkind") || strings.Contains(stderr, "can't evaluate") {
		t.Errorf("orch kubectl explain nosuchkind: out %q, err %v, stderr %q; want an error naming the kind", out, err, stderr)
	}
	// kubectl's errors and exit status come through.
	_, stderr, err = run(withKC, bin, "kubectl", "get", "nosuchkind")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr, "nosuchkind") {
		t.Errorf("orch kubectl get nosuchkind: err %v, stderr %q; want exit status 1 naming the kind", err, stderr)
	}
}

// envWithout returns the test process's environment without the given keys.
func envWithout(keys ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, key := range keys {
			drop = drop || k == key
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return env
}

func init() { register("kubectl-embedded-interrupt", testEmbeddedKubectlInterrupt) }

// testEmbeddedKubectlInterrupt checks that SIGINT ends `orch kubectl proxy`
// (which has no signal handler of its own) as it ends upstream kubectl:
// orch's main must not keep catching the signal for kubectl.
func testEmbeddedKubectlInterrupt(t *testing.T, s *testutil.Server) {
	dir := t.TempDir()
	cmd := exec.Command(testutil.Binary(t), "kubectl", "proxy", "--port", "0", "--address", "127.0.0.1")
	cmd.Env = append(envWithout("KUBECONFIG", "HOME"), "HOME="+dir, "KUBECONFIG="+s.Kubeconfig)
	stdout, err := cmd.StdoutPipe()
	must(t, err, "stdout pipe")
	must(t, cmd.Start(), "starting orch kubectl proxy")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "Starting to serve on 127.0.0.1:") {
		t.Fatalf("orch kubectl proxy printed %q (%v), want Starting to serve on 127.0.0.1:<port>", line, err)
	}
	must(t, cmd.Process.Signal(os.Interrupt), "SIGINT")
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
			t.Errorf("orch kubectl proxy ended with %v after SIGINT, want killed by SIGINT", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("orch kubectl proxy still runs a minute after SIGINT")
	}
}
