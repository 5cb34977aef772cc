package cgroups

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
)

// fixture is a Manager under a unique root plus the processes a test
// started; its cleanup kills the processes, then removes the root leaf-first
// in every hierarchy, even when the test failed.
type fixture struct {
	t     *testing.T
	m     *Manager
	mu    sync.Mutex
	procs []*exec.Cmd
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups (run as root: sudo go test ./agent/cgroups/)")
	}
}

func randomRoot(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "orcht-" + hex.EncodeToString(b)
}

// newV1Fixture skips unless the host has cgroup v1 memory and cpu hierarchies.
func newV1Fixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	requireRoot(t)
	for _, c := range []string{"memory", "cpu"} {
		var st unix.Statfs_t
		if err := unix.Statfs(filepath.Join(DefaultMountpoint, c), &st); err != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
			t.Skipf("no cgroup v1 %s hierarchy at %s/%s: the host is cgroup v2 only", c, DefaultMountpoint, c)
		}
	}
	cfg.Root, cfg.Version = randomRoot(t), 1
	return newFixture(t, cfg)
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	m, err := New(zaptest.NewLogger(t), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f := &fixture{t: t, m: m}
	t.Cleanup(f.cleanup)
	return f
}

func (f *fixture) cleanup() {
	f.mu.Lock()
	for _, c := range f.procs {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	f.mu.Unlock()
	dirs := []string{filepath.Join(f.m.cfg.Mountpoint, f.m.cfg.Root)}
	if mounts, err := allV1Mounts(); err == nil && f.m.Version() == 1 {
		dirs = dirs[:0]
		for _, mp := range mounts {
			dirs = append(dirs, filepath.Join(mp, f.m.cfg.Root))
		}
	}
	for _, d := range dirs {
		if err := rmdirTree(d); err != nil {
			f.t.Errorf("cleanup %s: %v", d, err)
		}
	}
}

// start runs a command the fixture kills in cleanup; with stdin, the
// returned writer feeds it.
func (f *fixture) start(cmd *exec.Cmd) io.WriteCloser {
	f.t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		f.t.Fatalf("start %v: %v", cmd.Args, err)
	}
	f.mu.Lock()
	f.procs = append(f.procs, cmd)
	f.mu.Unlock()
	return in
}

// helper returns a command re-executing the test binary in a helper role.
func helper(role string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+role)
	return cmd
}

// read returns a cgroup file's trimmed content in a controller's hierarchy.
func (f *fixture) read(controller, group, file string) string {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.m.Dir(controller, group), file))
	if err != nil {
		f.t.Fatalf("read %s: %v", file, err)
	}
	return strings.TrimSpace(string(data))
}

// expect checks a cgroup file's content.
func (f *fixture) expect(controller, group, file, want string) {
	f.t.Helper()
	if got := f.read(controller, group, file); got != want {
		f.t.Errorf("%s %s/%s = %q, want %q", controller, group, file, got, want)
	}
}

// allV1Mounts is every v1 hierarchy plus, on hybrid hosts, the unified one.
func allV1Mounts() ([]string, error) {
	v1, err := v1Mounts()
	if err != nil {
		return nil, err
	}
	unified, err := unifiedMounts()
	return append(v1, unified...), err
}

// gone fails unless group is absent in every v1 hierarchy and the unified one.
func (f *fixture) gone(group string) {
	f.t.Helper()
	mounts, err := allV1Mounts()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, mp := range mounts {
		if _, err := os.Stat(filepath.Join(mp, group)); !os.IsNotExist(err) {
			f.t.Errorf("%s still exists in %s (%v)", group, mp, err)
		}
	}
}
