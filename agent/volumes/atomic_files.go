package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// fileMode is the permission a projected file gets: its mode, plus group
// read when an fsGroup owns it (the kubelet's read-only ownership mask).
func fileMode(fp FileProjection) os.FileMode {
	perm := os.FileMode(fp.Mode) & os.ModePerm
	if fp.FsGroup != nil {
		perm |= 0o440
	}
	return perm
}

func sameGroup(st os.FileInfo, gid *int64) bool {
	if gid == nil {
		return true
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int64(sys.Gid) == *gid
}

// writePayloadToDir writes every file (and parent dirs, 0755) into dir.
func writePayloadToDir(dir string, payload map[string]FileProjection) error {
	for p, fp := range payload {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("create dir for %s: %w", p, err)
		}
		if err := writeFile(full, fp); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(full string, fp FileProjection) error {
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", full, err)
	}
	_, werr := f.Write(fp.Data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("write %s: %w", full, err)
	}
	if fp.FsGroup != nil {
		if err := os.Lchown(full, -1, int(*fp.FsGroup)); err != nil {
			return fmt.Errorf("chown %s: %w", full, err)
		}
	}
	// Chmod after writing: the umask must not change the requested mode.
	if err := os.Chmod(full, fileMode(fp)); err != nil {
		return fmt.Errorf("chmod %s: %w", full, err)
	}
	return nil
}

func topLevel(p string) string {
	first, _, _ := strings.Cut(filepath.Clean(p), "/")
	return first
}

// createUserVisible makes <top> -> ..data/<top> symlinks for new names.
func createUserVisible(targetDir string, payload map[string]FileProjection) error {
	for p := range payload {
		top := topLevel(p)
		link := filepath.Join(targetDir, top)
		if _, err := os.Lstat(link); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("stat %s: %w", link, err)
		}
		if err := os.Symlink(filepath.Join(dataDirName, top), link); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", link, err)
		}
	}
	return nil
}

// removeUserVisible drops top-level symlinks of old files no longer served.
func removeUserVisible(targetDir string, payload map[string]FileProjection, oldPaths map[string]struct{}) error {
	keep := map[string]struct{}{}
	for p := range payload {
		keep[topLevel(p)] = struct{}{}
	}
	var errs []error
	for p := range oldPaths {
		top := topLevel(p)
		if _, ok := keep[top]; ok {
			continue
		}
		keep[top] = struct{}{} // remove once
		if err := os.Remove(filepath.Join(targetDir, top)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", top, err))
		}
	}
	return errors.Join(errs...)
}
