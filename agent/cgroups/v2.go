package cgroups

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

type v2Backend struct {
	mount     string          // the cgroup2 mount point
	available map[string]bool // controllers in the mount's cgroup.controllers
}

var _ backend = (*v2Backend)(nil)

func newV2(mount string) (*v2Backend, error) {
	data, err := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("cgroup v2 at %s: %w", mount, err)
	}
	b := &v2Backend{mount: mount, available: map[string]bool{}}
	for _, c := range strings.Fields(string(data)) {
		b.available[c] = true
	}
	return b, nil
}

func (b *v2Backend) version() int { return 2 }

// v2Controllers are the controllers orch enables for its cgroups.
var v2Controllers = []string{"cpu", "memory", "pids"}

func (b *v2Backend) ensure(group string, r Resources) error {
	if err := b.create(group); err != nil {
		return err
	}
	dir := b.dir("", group)
	for _, f := range r.v2Values() {
		if !b.available[f.Controller] {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(f.Value), 0); err != nil {
			return fmt.Errorf("cgroup v2 %s: write %s=%q: %w", group, f.Name, f.Value, err)
		}
	}
	return nil
}

// create makes group's directory and enables the available orch controllers
// in every ancestor's cgroup.subtree_control from the mount down (as
// containerd's cgroup2.NewManager does; done here to keep cgroup2's eBPF
// dependency out of the binary). Nothing is written when none is available.
func (b *v2Backend) create(group string) error {
	dir := b.dir("", group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cgroup v2 %s: %w", group, err)
	}
	var want []string
	for _, c := range v2Controllers {
		if b.available[c] {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return nil
	}
	rel := strings.Split(strings.Trim(group, "/"), "/")
	for i := 0; i < len(rel); i++ {
		if err := enableControllers(filepath.Join(b.mount, filepath.Join(rel[:i]...)), want); err != nil {
			return fmt.Errorf("cgroup v2 %s: %w", group, err)
		}
	}
	return nil
}

// enableControllers adds the controllers missing from dir's
// cgroup.subtree_control.
func enableControllers(dir string, controllers []string) error {
	file := filepath.Join(dir, "cgroup.subtree_control")
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	have := strings.Fields(string(data))
	var add []string
	for _, c := range controllers {
		if !slices.Contains(have, c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	if err := os.WriteFile(file, []byte(strings.Join(add, " ")), 0); err != nil {
		return fmt.Errorf("write %s %v: %w", file, add, err)
	}
	return nil
}

func (b *v2Backend) dir(_, group string) string { return filepath.Join(b.mount, group) }

func (b *v2Backend) exists(group string) bool {
	_, err := os.Stat(b.dir("", group))
	return err == nil
}

func (b *v2Backend) remove(group string) error { return rmdirTree(b.dir("", group)) }

func (b *v2Backend) children(group string) ([]string, error) { return subdirs(b.dir("", group)) }

func (b *v2Backend) addProc(group string, pid int) error {
	file := filepath.Join(b.dir("", group), "cgroup.procs")
	if err := os.WriteFile(file, []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("add pid %d to %s: %w", pid, group, err)
	}
	return nil
}

func (b *v2Backend) procs(group string) ([]int, error) {
	return readPids(filepath.Join(b.dir("", group), "cgroup.procs"))
}

func (b *v2Backend) oomKills(group string) (uint64, error) {
	n, err := readKey(filepath.Join(b.dir("", group), "memory.events"), "oom_kill")
	if errors.Is(err, fs.ErrNotExist) {
		if b.exists(group) {
			return 0, nil // memory controller not enabled here
		}
		return 0, fmt.Errorf("%s: %w", group, ErrNotFound)
	}
	return n, err
}
