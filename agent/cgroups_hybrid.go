package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/agent/cgroups"
	"github.com/orch/orch/agent/kubelet"
)

// hybridUnified is where hybrid cgroup hosts (v1 controllers plus a named
// cgroup2 tree) mount the unified hierarchy, in which runc also creates the
// containers' cgroups.
const hybridUnified = "/sys/fs/cgroup/unified"

// hybridCgroups works around agent/cgroups on hybrid hosts: its v1 backend
// removes and lists pod cgroups only in the "cgroup" mounts, so the
// directories runc makes in the cgroup2 "unified" mount stay behind. This
// wrapper removes (and lists) those too. Remove it once agent/cgroups walks
// the unified mount itself.
type hybridCgroups struct {
	*cgroups.Manager
	unified string // <unified mount>/<root>/kubepods, "" when not hybrid
}

var _ kubelet.Cgroups = (*hybridCgroups)(nil)

func newHybridCgroups(m *cgroups.Manager) *hybridCgroups {
	h := &hybridCgroups{Manager: m}
	if m.Version() == 1 {
		if st, err := os.Stat(filepath.Join(hybridUnified, "cgroup.procs")); err == nil && !st.IsDir() {
			h.unified = filepath.Join(hybridUnified, m.KubepodsPath())
		}
	}
	return h
}

func (h *hybridCgroups) podDirs(uid types.UID) []string {
	name := "pod" + string(uid)
	return []string{filepath.Join(h.unified, name), filepath.Join(h.unified, "burstable", name), filepath.Join(h.unified, "besteffort", name)}
}

// RemovePod removes the pod's cgroups, the unified ones included.
func (h *hybridCgroups) RemovePod(ctx context.Context, uid types.UID) error {
	err := h.Manager.RemovePod(ctx, uid)
	if h.unified == "" {
		return err
	}
	for _, d := range h.podDirs(uid) {
		err = errors.Join(err, rmdirTree(d))
	}
	return err
}

// PodCgroups lists pods with cgroups, the unified ones included.
func (h *hybridCgroups) PodCgroups() ([]types.UID, error) {
	out, err := h.Manager.PodCgroups()
	if err != nil || h.unified == "" {
		return out, err
	}
	seen := map[types.UID]bool{}
	for _, u := range out {
		seen[u] = true
	}
	for _, dir := range []string{h.unified, filepath.Join(h.unified, "burstable"), filepath.Join(h.unified, "besteffort")} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if u, ok := strings.CutPrefix(e.Name(), "pod"); ok && e.IsDir() && !seen[types.UID(u)] {
				seen[types.UID(u)] = true
				out = append(out, types.UID(u))
			}
		}
	}
	return out, nil
}

// rmdirTree removes a cgroup directory and its sub-cgroups, leaves first
// (cgroup directories can only be rmdir'ed, and only when empty of tasks).
func rmdirTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("walking %s: %w", dir, err)
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing cgroup %s: %w", d, err)
		}
	}
	return nil
}
