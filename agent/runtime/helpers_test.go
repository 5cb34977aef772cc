package runtime

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	testimages "github.com/orch/orch/test/images"
)

// Image references the tests import (busybox under both names).
const (
	busyboxRef = "docker.io/library/busybox:1.36"
	nginxRef   = "docker.io/library/nginx:1.25"
)

// daemon is one managed containerd with its own root, state and socket,
// shared by the package's tests (see sharedDaemon) and torn down at the end.
type daemon struct {
	m       *Managed
	client  *containerd.Client
	base    string
	imgDir  string
	stopped bool
}

var (
	shared     *daemon
	sharedErr  error
	sharedOnce sync.Once
)

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func requireHost(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: containerd tests need root")
	}
	for _, bin := range []string{"containerd", "runc", "containerd-shim-runc-v2"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s not in PATH (scripts/install-deps.sh installs it)", bin)
		}
	}
	if _, err := os.Stat(testimages.BusyboxPath); err != nil {
		t.Skipf("skipping: %s missing (busybox-static)", testimages.BusyboxPath)
	}
}

// startDaemon starts a managed containerd under /run/orcht-<rand>.
func startDaemon(ctx context.Context, log *zap.Logger) (*daemon, error) {
	base := "/run/orcht-" + randHex(4)
	d := &daemon{base: base, imgDir: filepath.Join(base, "images")}
	if err := os.MkdirAll(d.imgDir, 0o755); err != nil {
		return nil, err
	}
	m, err := StartManagedConfig(ctx, log, ManagedConfig{
		RootDir: filepath.Join(base, "root"), StateDir: filepath.Join(base, "state"),
	})
	if err != nil {
		os.RemoveAll(base)
		return nil, err
	}
	d.m = m
	c, err := Connect(ctx, m.Address())
	if err != nil {
		d.teardown()
		return nil, err
	}
	d.client = c
	return d, nil
}

// teardown stops containerd, unmounts anything left under base and removes
// it (the containerd namespaces die with the root dir).
func (d *daemon) teardown() {
	if d.client != nil {
		d.client.Close()
	}
	if d.m != nil && !d.stopped {
		_ = d.m.Stop()
		d.stopped = true
	}
	unmountUnder(d.base)
	_ = os.RemoveAll(d.base)
}

// unmountUnder lazily unmounts every mount point below dir, deepest first.
func unmountUnder(dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var mps []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 4 && strings.HasPrefix(fs[4], dir+"/") {
			mps = append(mps, fs[4])
		}
	}
	for i := len(mps) - 1; i >= 0; i-- {
		_ = unix.Unmount(mps[i], unix.MNT_DETACH)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.teardown()
	}
	removeCgroupDirs(testNS)
	os.Exit(code)
}

// sharedDaemon returns the package's containerd, starting it and importing
// the busybox test image on first use.
func sharedDaemon(t *testing.T) *daemon {
	t.Helper()
	requireHost(t)
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		shared, sharedErr = startDaemon(ctx, stderrLogger())
		if sharedErr != nil {
			return
		}
		sharedErr = importTar(ctx, shared.client, testNS, buildImage(t, shared))
	})
	if sharedErr != nil {
		t.Fatalf("shared containerd: %v", sharedErr)
	}
	return shared
}

// testNS is this run's containerd namespace; containers without a cgroup
// path land in /sys/fs/cgroup/<ctrl>/<testNS>, removed by TestMain.
var testNS = "orcht-" + randHex(4)

// removeCgroupDirs removes the (empty) cgroup dirs named name in every
// hierarchy, children first.
func removeCgroupDirs(name string) {
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

func importTar(ctx context.Context, c *containerd.Client, ns, path string) error {
	ctx = namespaces.WithNamespace(ctx, ns)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	imgs, err := c.Import(ctx, f)
	if err != nil {
		return fmt.Errorf("import %s: %w", path, err)
	}
	if len(imgs) == 0 {
		return fmt.Errorf("import %s: no images", path)
	}
	return nil
}

// stderrLogger is for the shared daemon, which outlives single tests.
func stderrLogger() *zap.Logger {
	cfg := zap.NewDevelopmentConfig()
	cfg.Level = zap.NewAtomicLevelAt(zapcore.WarnLevel)
	l, _ := cfg.Build()
	return l
}

// runningSleeper runs `sleep 1000` as container name of a new pod (in a
// network namespace of its own when withNetns) and waits until it runs.
func runningSleeper(t *testing.T, r *Containerd, name string, withNetns bool) ContainerSpec {
	t.Helper()
	s := newPod(t, withNetns).spec(name, "sleep", "1000")
	run(t, r, s)
	waitState(t, r, s.ID, StateRunning, 20*time.Second)
	return s
}

// newRuntime returns a runtime over the shared daemon in the test
// namespace, with logs and FIFOs in the test's temp dir.
func newRuntime(t *testing.T, d *daemon, set ...func(*Options)) *Containerd {
	t.Helper()
	dir := t.TempDir()
	o := Options{Namespace: testNS, LogDir: filepath.Join(dir, "logs"), FIFODir: filepath.Join(d.base, "fifo")}
	for _, f := range set {
		f(&o)
	}
	r, err := New(context.Background(), zaptest.NewLogger(t), d.client, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// netns creates a network namespace with loopback up, deleted on cleanup.
func netns(t *testing.T) string {
	t.Helper()
	name := "orcht-" + randHex(4)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v: %s", err, out)
	}
	return "/run/netns/" + name
}

// testPod is one pod's identity for the tests.
type testPod struct {
	uid, name, netns string
}

func newPod(t *testing.T, withNetns bool) testPod {
	p := testPod{uid: "uid-" + randHex(6), name: "pod-" + randHex(3)}
	if withNetns {
		p.netns = netns(t)
	}
	return p
}

func (p testPod) spec(name string, cmd ...string) ContainerSpec {
	return ContainerSpec{
		ID: ContainerID(p.uid, name, 0), PodUID: p.uid, PodName: p.name, PodNamespace: "default",
		Name: name, Image: busyboxRef, Command: cmd, NetnsPath: p.netns,
	}
}

// run creates and starts s, removing the container on cleanup.
func run(t *testing.T, r *Containerd, s ContainerSpec) {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() {
		if err := r.RemoveContainer(context.Background(), s.ID); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := r.CreateContainer(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := r.StartContainer(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
}

// waitState polls the status until it has state want.
func waitState(t *testing.T, r *Containerd, id string, want State, timeout time.Duration) ContainerStatus {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, err := r.ContainerStatus(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if st.State == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s: state %s after %s, want %s", id, st.State, timeout, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLog polls the container's log file until it contains substr.
func waitLog(t *testing.T, path, substr string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), substr) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("log %s: no %q after %s; have:\n%s", path, substr, timeout, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func buildImage(t *testing.T, d *daemon) string {
	return testimages.BuildBusybox(t, d.imgDir, busyboxRef, nginxRef)
}
