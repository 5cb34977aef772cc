package kubeletapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/orch/orch/agent/runtime"
	testimages "github.com/orch/orch/test/images"
)

// TestRealContainerd runs exec and logs against a real containerd (root,
// containerd, runc and busybox-static needed; skipped otherwise).
func TestRealContainerd(t *testing.T) {
	rt, _ := realRuntime(t)
	uid := "uid-" + randHex(4)
	id := runtime.ContainerID(uid, "app", 0)
	spec := runtime.ContainerSpec{ID: id, PodUID: uid, PodName: "web", PodNamespace: "default", Name: "app",
		Image: "docker.io/library/busybox:1.36", Command: []string{"sh", "-c", "echo started; while true; do echo tick; sleep 0.2; done"}}
	ctx := context.Background()
	if err := rt.CreateContainer(ctx, spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.RemoveContainer(context.Background(), id) })
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	e := serveRuntime(t, rt, Pod{UID: uid, IP: "127.0.0.1", Containers: map[string]string{"app": id}})

	// logs -f: the first lines arrive while the container runs
	lctx, lcancel := context.WithTimeout(ctx, 30*time.Second)
	defer lcancel()
	resp, err := e.getLogs(t, lctx, "app", "follow=true&timestamps=true")
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	for _, want := range []string{"started", "tick", "tick"} {
		l, err := rd.ReadString('\n')
		if err != nil || !strings.HasSuffix(l, " "+want+"\n") {
			t.Fatalf("follow: %q %v", l, err)
		}
	}
	resp.Body.Close()

	for _, kind := range []executorKind{viaSPDY, viaWebSocket} {
		run := func(cmd []string, stdin string, tty bool) (string, error) {
			u := execURL(e.base, "/exec/default/web/app", cmd, stdin != "", tty)
			var out, errOut bytes.Buffer
			opts := remotecommand.StreamOptions{Stdout: &out, Tty: tty}
			if !tty {
				opts.Stderr = &errOut
			}
			if stdin != "" {
				opts.Stdin = strings.NewReader(stdin)
			}
			ectx, ecancel := context.WithTimeout(ctx, 30*time.Second)
			defer ecancel()
			err := newExecutor(t, e.rest, kind, u).StreamWithContext(ectx, opts)
			return out.String() + errOut.String(), err
		}
		if out, err := run([]string{"sh", "-c", "echo hi; echo err >&2"}, "", false); err != nil || out != "hi\nerr\n" {
			t.Fatalf("%s exec: %q %v", kind, out, err)
		}
		if out, err := run([]string{"cat"}, "line1\nline2\n", false); err != nil || out != "line1\nline2\n" {
			t.Fatalf("%s stdin: %q %v", kind, out, err)
		}
		var exitErr utilexec.ExitError
		if _, err := run([]string{"sh", "-c", "exit 3"}, "", false); !errors.As(err, &exitErr) || exitErr.ExitStatus() != 3 {
			t.Fatalf("%s exit code: %v", kind, err)
		}
		if out, err := run([]string{"sh", "-c", "test -t 0 && echo is-a-tty"}, "", true); err != nil || !strings.Contains(out, "is-a-tty") {
			t.Fatalf("%s tty: %q %v", kind, out, err)
		}
		// a client that goes away ends its process
		u := execURL(e.base, "/exec/default/web/app", []string{"sleep", "1234"}, false, false)
		sctx, scancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_ = newExecutor(t, e.rest, kind, u).StreamWithContext(sctx, remotecommand.StreamOptions{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
		scancel()
		deadline := time.Now().Add(10 * time.Second)
		for {
			out, err := run([]string{"ps"}, "", false)
			if err == nil && !strings.Contains(out, "sleep 1234") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: exec process outlived its client: %q %v", kind, out, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// serveRuntime serves the node API over rt for pod default/web on loopback.
func serveRuntime(t *testing.T, rt Runtime, pod Pod) *testEnv {
	t.Helper()
	b := nodePKI(t)
	e := &testEnv{bundle: b, stopped: make(chan struct{}), pod: pod}
	srv, err := New(zaptest.NewLogger(t), Config{Runtime: rt, ServerTLS: b.ServerTLSConfig(), ClientCA: b.CAPool(),
		AllowedClient: func(*x509.Certificate) bool { return true },
		PodLookup:     func(ns, name string) (Pod, bool) { return e.pod, name == "web" }})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	go func() { _ = srv.Serve(sctx, ln); close(e.stopped) }()
	t.Cleanup(func() { cancel(); <-e.stopped })
	e.base = "https://" + ln.Addr().String()
	e.rest = e.clientConfig(t, "system:apiserver-kubelet-client")
	return e
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// realRuntime starts a managed containerd under /run/orchkt-<rand> with the
// busybox test image, torn down (mounts, dirs, cgroups) on cleanup.
func realRuntime(t *testing.T) (*runtime.Containerd, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, bin := range []string{"containerd", "runc", "containerd-shim-runc-v2"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not in PATH", bin)
		}
	}
	if _, err := os.Stat(testimages.BusyboxPath); err != nil {
		t.Skip("busybox-static missing")
	}
	base, ns := "/run/orchkt-"+randHex(4), "orchkt-"+randHex(4)
	log := zaptest.NewLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := runtime.StartManagedConfig(ctx, log, runtime.ManagedConfig{RootDir: filepath.Join(base, "root"), StateDir: filepath.Join(base, "state")})
	if err != nil {
		_ = os.RemoveAll(base)
		t.Fatal(err)
	}
	client, err := runtime.Connect(ctx, m.Address())
	t.Cleanup(func() {
		if client != nil {
			client.Close()
		}
		_ = m.Stop()
		unmountBelow(base)
		_ = os.RemoveAll(base)
		removeCgroups(ns)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	tar := testimages.BuildBusybox(t, filepath.Join(base, "images"), "docker.io/library/busybox:1.36")
	f, err := os.Open(tar)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := client.Import(namespaces.WithNamespace(ctx, ns), f); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(ctx, log, client, runtime.Options{Namespace: ns, LogDir: filepath.Join(base, "logs"), FIFODir: filepath.Join(base, "fifo")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt, ns
}

func unmountBelow(dir string) {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	var mps []string
	for _, line := range strings.Split(string(b), "\n") {
		if fs := strings.Fields(line); len(fs) > 4 && strings.HasPrefix(fs[4], dir+"/") {
			mps = append(mps, fs[4])
		}
	}
	for i := len(mps) - 1; i >= 0; i-- {
		_ = unix.Unmount(mps[i], unix.MNT_DETACH)
	}
}

func removeCgroups(name string) {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/" + name)
	dirs = append(dirs, "/sys/fs/cgroup/"+name)
	for _, d := range dirs {
		subs, _ := filepath.Glob(d + "/*")
		for _, s := range subs {
			if fi, err := os.Stat(s); err == nil && fi.IsDir() {
				_ = os.Remove(s)
			}
		}
		_ = os.Remove(d)
	}
}
