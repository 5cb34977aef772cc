package crossbuild

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/orch/orch/test/testutil"
)

// target is one release platform other than the host's.
type target struct {
	goarch, goarm string
	machine       elf.Machine
	class         elf.Class
}

var targets = []target{
	{goarch: "arm64", machine: elf.EM_AARCH64, class: elf.ELFCLASS64},
	{goarch: "arm", goarm: "7", machine: elf.EM_ARM, class: elf.ELFCLASS32},
}

func TestCrossBuild(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipping: the go tool is not in PATH")
	}
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		t.Run("linux-"+tg.goarch+tg.goarm, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "orch")
			build(t, goTool, root, tg, out)
			if err := checkELF(out, tg); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// build runs `go build` as scripts/release.sh does, for tg, into out.
func build(t *testing.T, goTool, root string, tg target, out string) {
	t.Helper()
	args, err := testutil.BuildArgs(root)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, append(args,
		"-ldflags", "-s -w -X github.com/orch/orch/internal/version.Version=v0.0.0-crossbuild", "-o", out, ".")...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+tg.goarch, "GOARM="+tg.goarm)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=linux GOARCH=%s GOARM=%s go build: %v\n%s", tg.goarch, tg.goarm, err, b)
	}
}

// checkELF says whether path is a static executable for tg's machine.
func checkELF(path string, tg target) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("open the built binary: %w", err)
	}
	defer f.Close()
	if f.Machine != tg.machine || f.Class != tg.class || f.Type != elf.ET_EXEC {
		return fmt.Errorf("%s: machine %v, class %v, type %v; want %v, %v, ET_EXEC",
			path, f.Machine, f.Class, f.Type, tg.machine, tg.class)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return fmt.Errorf("%s is dynamically linked (program header %v): CGO_ENABLED=0 was not honoured", path, p.Type)
		}
	}
	return nil
}

// TestCheckELFRejectsDynamic checks the check: the host's /bin/sh is a
// dynamically linked executable.
func TestCheckELFRejectsDynamic(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("skipping: the check of the check knows only linux/amd64's /bin/sh")
	}
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	host := target{goarch: "amd64", machine: elf.EM_X86_64, class: elf.ELFCLASS64}
	if err := checkELF(sh, host); err == nil {
		t.Errorf("checkELF(%s) = nil, want an error for a dynamic (or PIE) executable", sh)
	}
	if err := checkELF(sh, targets[0]); err == nil {
		t.Errorf("checkELF(%s, arm64) = nil, want a machine mismatch", sh)
	}
}
