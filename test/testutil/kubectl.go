package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// EnvKubectl names a kubectl binary to use instead of building one.
const EnvKubectl = "ORCH_KUBECTL"

var kubectlBuild struct {
	once sync.Once
	path string
	err  error
}

// Kubectl returns the path of a real upstream kubectl: $ORCH_KUBECTL, or the
// one scripts/build-kubectl.sh builds (and caches). It never falls back to a
// kubectl from PATH.
func Kubectl(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvKubectl); p != "" {
		return p
	}
	kubectlBuild.once.Do(func() { kubectlBuild.path, kubectlBuild.err = buildKubectl() })
	if kubectlBuild.err != nil {
		t.Fatalf("building kubectl: %v", kubectlBuild.err)
	}
	return kubectlBuild.path
}

func buildKubectl() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "scripts", "build-kubectl.sh")
	cmd := exec.Command("sh", script)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", script, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	path := strings.TrimSpace(lines[len(lines)-1])
	if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s printed %q, which is not an executable file (stat: %v)", script, path, err)
	}
	return path, nil
}
