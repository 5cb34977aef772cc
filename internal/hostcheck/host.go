package hostcheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Host is what the checks read. Paths are absolute host paths ("/proc/...").
type Host interface {
	ReadFile(path string) ([]byte, error)
	Exists(path string) bool
	LookPath(name string) (string, error)
	KernelRelease() string
}

// OSHost reads the real host, optionally under Root (tests: a t.TempDir()
// holding proc/, sys/, lib/modules/...). Path and Release override PATH
// look-ups and uname -r when set.
type OSHost struct {
	Root    string
	Path    []string // directories searched instead of $PATH when non-nil
	Release string
}

// ReadFile reads path under Root.
func (h OSHost) ReadFile(path string) ([]byte, error) {
	return os.ReadFile(filepath.Join(h.Root, path))
}

// Exists tells whether path exists under Root.
func (h OSHost) Exists(path string) bool {
	_, err := os.Stat(filepath.Join(h.Root, path))
	return err == nil
}

// LookPath finds an executable in Path, or in $PATH when Path is nil.
func (h OSHost) LookPath(name string) (string, error) {
	if h.Path == nil {
		return exec.LookPath(name)
	}
	for _, d := range h.Path {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// KernelRelease is Release, or uname -r.
func (h OSHost) KernelRelease() string {
	if h.Release != "" {
		return h.Release
	}
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return string(bytes.TrimRight(u.Release[:], "\x00"))
}
