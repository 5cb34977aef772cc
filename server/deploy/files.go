package deploy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SkipSuffix turns a manifest off: <file>.skip next to <file>.
const SkipSuffix = ".skip"

// IsManifest reports whether a file name is a manifest orch applies.
func IsManifest(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false // editors' swap and temporary files
	}
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// BaseName is the name --disable matches: the file name without extension.
func BaseName(file string) string { return strings.TrimSuffix(file, filepath.Ext(file)) }

// fileFor maps a changed path's name to the manifest it concerns ("" if
// none): foo.yaml and foo.yaml.skip both concern foo.yaml.
func fileFor(name string) string {
	name = strings.TrimSuffix(name, SkipSuffix)
	if IsManifest(name) {
		return name
	}
	return ""
}

// fileState is what the directory says about one manifest file.
type fileState int

const (
	fileAbsent   fileState = iota // gone: prune what it applied
	filePresent                   // apply it
	fileDisabled                  // .skip or --disable: leave it alone
)

// Dir is this server's manifests directory and the base names --disable
// turns off.
type Dir struct {
	Path     string
	Disabled map[string]bool
	// Server names this server in the records: a file missing here is
	// pruned only if this server applied it last (see reconcile).
	Server string
}

// List returns the manifest files in the directory, sorted by name.
func (d Dir) List() ([]string, error) {
	entries, err := os.ReadDir(d.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading manifests dir: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0 {
			if IsManifest(e.Name()) {
				out = append(out, e.Name())
			}
		}
	}
	return out, nil
}

// State reads the state of one file and, when present, its content.
func (d Dir) State(file string) (fileState, []byte, error) {
	if d.Disabled[BaseName(file)] {
		return fileDisabled, nil, nil
	}
	if _, err := os.Stat(filepath.Join(d.Path, file+SkipSuffix)); err == nil {
		return fileDisabled, nil, nil
	}
	data, err := os.ReadFile(filepath.Join(d.Path, file))
	if errors.Is(err, fs.ErrNotExist) {
		return fileAbsent, nil, nil
	}
	if err != nil {
		return fileAbsent, nil, fmt.Errorf("reading manifest %s: %w", file, err)
	}
	return filePresent, data, nil
}
