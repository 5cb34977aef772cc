package killall

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch/orch/test/testutil"
)

// TestScriptsWritten checks (without root) that install.sh writes both
// scripts next to the binary with the bin dir baked in, and that they and
// install.sh are shellcheck-clean POSIX sh.
func TestScriptsWritten(t *testing.T) {
	repo, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "orch")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	env := append(os.Environ(), "ORCH_ROOT="+root, "ORCH_BINARY="+fake, "INSTALL_ORCH_SYSTEMD=false", "ORCH_BIN_DIR=/opt/orch/bin")
	run(t, env, "sh", filepath.Join(repo, "scripts", "install.sh"))
	files := map[string]string{
		"orch-killall.sh":   "ORCH_DEFAULT_BIN='/opt/orch/bin/orch'",
		"orch-uninstall.sh": "ORCH_DEFAULT_BIN_DIR='/opt/orch/bin'",
	}
	paths := []string{filepath.Join(repo, "scripts", "install.sh")}
	for name, want := range files {
		p := filepath.Join(root, "opt", "orch", "bin", name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o755 {
			t.Errorf("%s mode %v", name, st.Mode())
		}
		if !strings.HasPrefix(string(b), "#!/bin/sh\n") || !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q:\n%.300s", name, want, b)
		}
		paths = append(paths, p)
	}
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Log("shellcheck not installed (apt-get install shellcheck): not linted")
		return
	}
	if out, err := exec.Command("shellcheck", append([]string{"--shell=sh"}, paths...)...).CombinedOutput(); err != nil {
		t.Fatalf("shellcheck: %v\n%s", err, out)
	}
}
