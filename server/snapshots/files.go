package snapshots

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orch/orch/datastore"
)

// Info describes one snapshot file (the columns of `orch etcd-snapshot ls`).
type Info struct {
	Name     string    `json:"name"`
	Location string    `json:"location"` // file:// URL
	Size     int64     `json:"size"`
	Created  time.Time `json:"createdAt"`
	Revision int64     `json:"revision"`
	Node     string    `json:"node"`
}

// Saver writes a snapshot of the datastore to a file (*datastore.RaftStore).
type Saver interface {
	SaveSnapshotFile(ctx context.Context, path string) (datastore.SnapshotMeta, error)
}

var _ Saver = (*datastore.RaftStore)(nil)

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidateName checks a snapshot name or name prefix: one path element of
// letters, digits, '.', '_' and '-'.
func ValidateName(name string) error {
	if !validName.MatchString(name) || len(name) > 200 {
		return fmt.Errorf("snapshot name %q must be letters, digits, '.', '_' and '-', starting with a letter or digit", name)
	}
	return nil
}

// FileName is k3s's snapshot name: <prefix>-<node>-<unixtime>.
func FileName(prefix, node string, t time.Time) string {
	return prefix + "-" + node + "-" + strconv.FormatInt(t.Unix(), 10)
}

// Save writes a snapshot of store named FileName(prefix, node, now) into dir.
func Save(ctx context.Context, store Saver, dir, prefix, node string) (Info, error) {
	if err := ValidateName(prefix); err != nil {
		return Info{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Info{}, fmt.Errorf("snapshot dir: %w", err)
	}
	name := FileName(prefix, node, time.Now())
	path := filepath.Join(dir, name)
	meta, err := store.SaveSnapshotFile(ctx, path)
	if err != nil {
		return Info{}, err
	}
	return info(path, meta)
}

func info(path string, meta datastore.SnapshotMeta) (Info, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Info{}, err
	}
	abs, _ := filepath.Abs(path)
	return Info{Name: filepath.Base(path), Location: "file://" + abs, Size: st.Size(),
		Created: meta.Created, Revision: meta.Revision, Node: meta.Node}, nil
}

// List returns the snapshots in dir, oldest first; files that are not
// snapshots are skipped. A missing dir has none.
func List(dir string) ([]Info, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var out []Info
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".part") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		meta, err := datastore.ReadSnapshotMeta(path)
		if err != nil {
			continue
		}
		if i, err := info(path, meta); err == nil {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Created.Equal(out[b].Created) {
			return out[a].Created.Before(out[b].Created)
		}
		return out[a].Name < out[b].Name
	})
	return out, nil
}

// Delete removes the named snapshots from dir. Names that are not snapshot
// files there are errors; the others are still removed.
func Delete(dir string, names []string) ([]string, error) {
	var deleted []string
	var errs []error
	for _, name := range names {
		if err := ValidateName(name); err != nil {
			errs = append(errs, err)
			continue
		}
		path := filepath.Join(dir, name)
		if _, err := datastore.ReadSnapshotMeta(path); err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", name, err))
			continue
		}
		if err := os.Remove(path); err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", name, err))
			continue
		}
		deleted = append(deleted, name)
	}
	return deleted, errors.Join(errs...)
}

// Prune deletes the oldest snapshots named <prefix>-… in dir until at most
// retention of them are left, and returns the deleted names.
func Prune(dir, prefix string, retention int) ([]string, error) {
	if retention < 1 {
		return nil, fmt.Errorf("retention %d must be at least 1", retention)
	}
	if err := ValidateName(prefix); err != nil {
		return nil, err
	}
	all, err := List(dir)
	if err != nil {
		return nil, err
	}
	var mine []string
	for _, i := range all {
		if strings.HasPrefix(i.Name, prefix+"-") {
			mine = append(mine, i.Name)
		}
	}
	if len(mine) <= retention {
		return nil, nil
	}
	return Delete(dir, mine[:len(mine)-retention])
}
