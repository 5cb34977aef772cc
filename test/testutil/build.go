package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// EnvBinary names a prebuilt orch binary to test instead of building one.
const EnvBinary = "ORCH_BINARY"

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Main runs the tests of a package and removes what the package-wide helpers
// created (the orch build directory). Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// RepoRoot returns the root of the orch repository, found from this source
// file's location (test/testutil/build.go).
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("testutil: cannot locate source file")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("testutil: repo root %s has no go.mod: %w", root, err)
	}
	return root, nil
}

// Binary returns the path of the orch binary under test: $ORCH_BINARY, or a
// binary built once per test process from the repository root.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBinary); p != "" {
		return p
	}
	build.once.Do(func() { build.path, build.err = buildOrch() })
	if build.err != nil {
		t.Fatalf("building orch: %v", build.err)
	}
	return build.path
}

func buildOrch() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "orch-testbin-")
	if err != nil {
		return "", fmt.Errorf("temp dir for orch build: %w", err)
	}
	build.dir = dir
	out := filepath.Join(dir, "orch")
	args, err := BuildArgs(root)
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", append(args, "-o", out, ".")...)
	cmd.Dir = root
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build in %s: %w\n%s", root, err, buf.String())
	}
	return out, nil
}

// BuildArgs returns the go command's arguments of every build of the orch
// binary, for the repository at root: `build -buildvcs=false` and the flags
// of scripts/lib/go-build-flags.sh (-trimpath, the build tags and the
// text/template overlay). Callers add -ldflags, -o and the package.
func BuildArgs(root string) ([]string, error) {
	cmd := exec.Command("sh", filepath.Join(root, "scripts", "lib", "go-build-flags.sh"))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("scripts/lib/go-build-flags.sh: %w\n%s", err, stderr.String())
	}
	return append([]string{"build", "-buildvcs=false"}, strings.Fields(string(out))...), nil
}
