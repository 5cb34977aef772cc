package killall

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orch/orch/test/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root (links, netns, mounts, iptables, cgroups)")
	}
	for _, bin := range []string{"ip", "iptables", "tail", "sleep", "sh"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s not in PATH", bin)
		}
	}
}

// install runs scripts/install.sh under a fresh root with bin as the binary
// and returns the root.
func install(t *testing.T, bin string) string {
	t.Helper()
	repo, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	env := append(os.Environ(), "ORCH_ROOT="+root, "ORCH_BINARY="+bin, "INSTALL_ORCH_SYSTEMD=false")
	run(t, env, "sh", filepath.Join(repo, "scripts", "install.sh"))
	return root
}

// uniqueBinary copies the orch binary to a path of this test's own, so the
// scripts' match on the orch executable finds only this test's server.
func uniqueBinary(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(testutil.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "orch")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(testutil.EnvBinary, p)
	return p
}

// TestKillall starts a real orch server, makes an agent's host objects
// under the test's names, runs the installed orch-killall.sh aimed at them
// (twice) and checks that nothing of the instance is left while a second
// instance under other names is untouched; then orch-uninstall.sh removes
// the installed files.
func TestKillall(t *testing.T) {
	requireRoot(t)
	bin := uniqueBinary(t)
	srv := testutil.StartServer(t, testutil.Options{Quiet: true})
	ours := newInstance(t, srv.DataDir, bin)
	other := newInstance(t, t.TempDir(), "/nonexistent/orch")
	ours.create(t)
	other.create(t)

	before := ours.leftovers()
	for _, kind := range []string{"link ", "port ", "netns ", "mount ", "chain ", "cgroup ", "process ", "dir "} {
		if !hasPrefix(before, kind) {
			t.Fatalf("setup made no %q objects: %q", kind, before)
		}
	}
	otherBefore := other.leftovers()
	root := install(t, bin)
	killall := filepath.Join(root, "usr", "local", "bin", "orch-killall.sh")

	for i := 0; i < 2; i++ {
		out := run(t, ours.env(), killall)
		if left := ours.leftovers(); len(left) > 0 {
			t.Errorf("run %d: left behind: %q\n%s", i+1, left, out)
		}
		if srv.Running() {
			t.Errorf("run %d: orch server still running", i+1)
		}
		if got := other.leftovers(); !reflect.DeepEqual(got, otherBefore) {
			t.Fatalf("run %d touched another instance:\nbefore %q\nafter  %q", i+1, otherBefore, got)
		}
	}

	// The script removes itself: run a copy, twice.
	script, err := os.ReadFile(filepath.Join(root, "usr", "local", "bin", "orch-uninstall.sh"))
	if err != nil {
		t.Fatal(err)
	}
	uninstall := filepath.Join(t.TempDir(), "orch-uninstall.sh")
	if err := os.WriteFile(uninstall, script, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(ours.env(), "ORCH_ROOT="+root)
	for i := 0; i < 2; i++ {
		run(t, env, "sh", uninstall)
		var files []string
		_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		if len(files) > 0 {
			t.Errorf("uninstall run %d left files: %q", i+1, files)
		}
	}
	if got := other.leftovers(); !reflect.DeepEqual(got, otherBefore) {
		t.Fatalf("uninstall touched another instance:\nbefore %q\nafter  %q", otherBefore, got)
	}
}

func hasPrefix(list []string, p string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
