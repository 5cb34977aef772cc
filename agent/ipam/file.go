package ipam

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeFileAtomic writes data to dir/name through a fsynced temporary file.
// With replace it renames over an existing file; without, it links the
// temporary file into place, failing with os.ErrExist when name exists, so
// the file appears complete or not at all. The directory is fsynced after.
func writeFileAtomic(dir, name string, data []byte, replace bool) error {
	tmp, err := os.CreateTemp(dir, ".tmp-"+name+"-")
	if err != nil {
		return fmt.Errorf("ipam: create temp for %s: %w", name, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // no-op after rename; drops the temp name after link
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("ipam: write %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("ipam: fsync %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("ipam: close %s: %w", name, err)
	}
	final := filepath.Join(dir, name)
	if replace {
		err = os.Rename(tmpName, final)
	} else {
		err = os.Link(tmpName, final)
	}
	if err != nil {
		return fmt.Errorf("ipam: put %s in place: %w", name, err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("ipam: open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("ipam: fsync dir %s: %w", dir, err)
	}
	return nil
}
