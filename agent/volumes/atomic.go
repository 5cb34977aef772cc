package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
	maxFileNameLen = 255
	maxPathLen     = 4096
)

// FileProjection is one file of an atomically written volume.
type FileProjection struct {
	Data []byte
	Mode int32
	// FsGroup, when set, owns the file (group) and gets read access, as the
	// kubelet's SetVolumeOwnership does for fsGroup.
	FsGroup *int64
}

// writeAtomic writes payload into targetDir the way the kubelet's
// AtomicWriter does. It reports whether anything changed. The steps:
//  1. validate the payload's paths;
//  2. if the current ..data set equals the payload, stop;
//  3. write the payload into a new "..<timestamp>.<rand>" directory;
//  4. point ..data_tmp at it and rename it over ..data (atomic swap);
//  5. create user-visible symlinks <top-level name> -> ..data/<name>;
//  6. remove user-visible names no longer in the payload and the old dir.
func writeAtomic(targetDir string, payload map[string]FileProjection) (bool, error) {
	if err := validatePayload(payload); err != nil {
		return false, err
	}
	dataLink := filepath.Join(targetDir, dataDirName)
	oldTs, err := os.Readlink(dataLink)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", dataLink, err)
	}
	oldPaths := map[string]struct{}{}
	if oldTs != "" {
		oldPaths, err = payloadFiles(filepath.Join(targetDir, oldTs))
		if err != nil {
			return false, err
		}
		if same, err := samePayload(filepath.Join(targetDir, oldTs), payload, oldPaths); err != nil || same {
			return false, err
		}
	}
	tsDir, err := os.MkdirTemp(targetDir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return false, fmt.Errorf("create data dir in %s: %w", targetDir, err)
	}
	if err := finishWrite(targetDir, tsDir, payload, oldPaths); err != nil {
		if filepath.Base(tsDir) != currentTs(dataLink) {
			_ = os.RemoveAll(tsDir)
		}
		return false, err
	}
	if oldTs != "" {
		if err := os.RemoveAll(filepath.Join(targetDir, oldTs)); err != nil {
			return true, fmt.Errorf("remove old data dir: %w", err)
		}
	}
	return true, nil
}

func currentTs(dataLink string) string {
	ts, _ := os.Readlink(dataLink)
	return ts
}

func finishWrite(targetDir, tsDir string, payload map[string]FileProjection, oldPaths map[string]struct{}) error {
	if err := os.Chmod(tsDir, 0o755); err != nil {
		return fmt.Errorf("chmod %s: %w", tsDir, err)
	}
	if err := writePayloadToDir(tsDir, payload); err != nil {
		return err
	}
	tmpLink := filepath.Join(targetDir, newDataDirName)
	if err := os.Remove(tmpLink); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale %s: %w", tmpLink, err)
	}
	if err := os.Symlink(filepath.Base(tsDir), tmpLink); err != nil {
		return fmt.Errorf("create %s: %w", tmpLink, err)
	}
	if err := os.Rename(tmpLink, filepath.Join(targetDir, dataDirName)); err != nil {
		_ = os.Remove(tmpLink)
		return fmt.Errorf("swap %s: %w", dataDirName, err)
	}
	if err := createUserVisible(targetDir, payload); err != nil {
		return err
	}
	return removeUserVisible(targetDir, payload, oldPaths)
}

// validatePayload rejects absolute paths, ".." elements, names starting
// with ".." and over-long names, as the kubelet's validatePath does.
func validatePayload(payload map[string]FileProjection) error {
	for p := range payload {
		if err := validatePath(p); err != nil {
			return err
		}
	}
	return nil
}

func validatePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("invalid path: must not be empty")
	case len(p) > maxPathLen:
		return fmt.Errorf("invalid path: must be less than or equal to %d characters", maxPathLen)
	case filepath.IsAbs(p):
		return fmt.Errorf("invalid path %q: must be relative path", p)
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("invalid path %q: must not start with '..'", p)
	}
	for _, item := range strings.Split(p, "/") {
		if item == ".." {
			return fmt.Errorf("invalid path %q: must not contain '..'", p)
		}
		if len(item) > maxFileNameLen {
			return fmt.Errorf("invalid path %q: element %q must not be longer than %d", p, item, maxFileNameLen)
		}
	}
	return nil
}

// payloadFiles lists the regular files under dir, relative to it.
func payloadFiles(dir string) (map[string]struct{}, error) {
	out := map[string]struct{}{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = struct{}{}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	return out, nil
}

func samePayload(dir string, payload map[string]FileProjection, old map[string]struct{}) (bool, error) {
	if len(old) != len(payload) {
		return false, nil
	}
	for p, fp := range payload {
		if _, ok := old[filepath.Clean(p)]; !ok {
			return false, nil
		}
		full := filepath.Join(dir, p)
		st, err := os.Lstat(full)
		if err != nil {
			return false, fmt.Errorf("stat %s: %w", full, err)
		}
		if st.Mode().Perm() != fileMode(fp) || !sameGroup(st, fp.FsGroup) {
			return false, nil
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return false, fmt.Errorf("read %s: %w", full, err)
		}
		if !bytes.Equal(data, fp.Data) {
			return false, nil
		}
	}
	return true, nil
}
