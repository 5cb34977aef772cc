package deadcode

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestTemplateMethodsListed reads the templates of every package orch links
// that imports text/template or html/template (Go files and embedded
// files) and fails for each {{.Name}} the overlay's list lacks: a method of
// that name would be missing from the binary and the template would fail
// with "can't evaluate field".
func TestTemplateMethodsListed(t *testing.T) {
	root, goTool := setup(t)
	listed, err := readList(filepath.Join(root, "scripts", "lib", "overlay", "template-methods.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := templatePackages(goTool, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no package importing text/template: cannot check")
	}
	missing := map[string][]string{}
	for _, p := range pkgs {
		t.Logf("%s: %d files", p.path, len(p.files))
		for _, f := range p.files {
			names, err := templateNames(filepath.Join(p.dir, f))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if !listed[n] {
					missing[n] = append(missing[n], p.path+"/"+f)
				}
			}
		}
	}
	keys := make([]string, 0, len(missing))
	for k := range missing {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("templates use .%s (%s): add it to scripts/lib/overlay/template-methods.txt", k, strings.Join(dedup(missing[k]), ", "))
	}
}

type pkg struct {
	path, dir string
	files     []string
}

// templatePackages lists the non-standard packages of orch's build that
// import a template package, with their Go and embedded files.
func templatePackages(goTool, root string) ([]pkg, error) {
	format := `{{if not .Standard}}{{.ImportPath}}{{"\t"}}{{.Dir}}{{"\t"}}{{join .Imports " "}}{{"\t"}}` +
		`{{join .GoFiles " "}} {{join .EmbedFiles " "}}{{end}}`
	cmd := exec.Command(goTool, "list", "-deps", "-tags", "urfave_cli_no_docs,grpcnotrace", "-f", format, ".")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps: %w", err)
	}
	var pkgs []pkg
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || !importsTemplate(strings.Fields(f[2])) {
			continue
		}
		pkgs = append(pkgs, pkg{path: f[0], dir: f[1], files: strings.Fields(f[3])})
	}
	return pkgs, nil
}

func importsTemplate(imports []string) bool {
	for _, i := range imports {
		if i == "text/template" || i == "html/template" {
			return true
		}
	}
	return false
}

var (
	action = regexp.MustCompile(`\{\{([^\n]*?)\}\}`)
	field  = regexp.MustCompile(`\.([A-Z]\w*)`)
)

// templateNames returns the capitalised names after a dot inside the
// one-line {{ }} actions of a file.
func templateNames(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range action.FindAllSubmatch(b, -1) {
		for _, m := range field.FindAllSubmatch(a[1], -1) {
			names = append(names, string(m[1]))
		}
	}
	return names, nil
}

func readList(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			names[l] = true
		}
	}
	return names, sc.Err()
}

func dedup(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
