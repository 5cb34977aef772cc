package deadcode

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch/orch/test/testutil"
)

// TestNoDynamicMethodLookup links orch with -dumpdep and fails when a
// function the linker marks <ReflectMethod> is reachable, naming the chain
// of calls from the program's entry that reaches it.
func TestNoDynamicMethodLookup(t *testing.T) {
	root, goTool := setup(t)
	args, err := testutil.BuildArgs(root)
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, "-ldflags=-s -w -dumpdep", "-o", filepath.Join(t.TempDir(), "orch"), ".")
	cmd := exec.Command(goTool, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var deps bytes.Buffer
	cmd.Stderr = &deps
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, tail(deps.String(), 2000))
	}
	g := parseDeps(&deps)
	if len(g.marked) == 0 && g.edges == 0 {
		t.Fatal("go build -ldflags=-dumpdep printed no dependency edges: cannot check")
	}
	for _, fn := range g.marked {
		t.Errorf("the linker keeps every exported method: %s looks methods up by a run-time name, reached by\n  %s",
			fn, strings.Join(g.pathTo(fn), "\n  <- "))
	}
}

// graph is the linker's reachability graph as -dumpdep prints it
// ("caller -> callee" per line, "<ReflectMethod>" after a marked name).
type graph struct {
	from   map[string]string // first caller seen of each symbol
	marked []string
	edges  int
}

func parseDeps(r *bytes.Buffer) graph {
	g := graph{from: map[string]string{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		a, b, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		g.edges++
		for _, s := range []*string{&a, &b} {
			if name, found := strings.CutSuffix(*s, " <ReflectMethod>"); found {
				*s = name
				if !seen[name] {
					seen[name] = true
					g.marked = append(g.marked, name)
				}
			}
		}
		if _, ok := g.from[b]; !ok {
			g.from[b] = a
		}
	}
	return g
}

// pathTo follows first callers back from fn towards the entry point.
func (g graph) pathTo(fn string) []string {
	path := []string{fn}
	for n := fn; len(path) < 40; {
		caller, ok := g.from[n]
		if !ok || caller == "_" || caller == "" {
			break
		}
		path = append(path, caller)
		n = caller
	}
	return path
}

func setup(t *testing.T) (root, goTool string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipping: the go tool is not in PATH")
	}
	root, err = testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root, goTool
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
