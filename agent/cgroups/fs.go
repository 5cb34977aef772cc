package cgroups

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// rmdirTree removes dir and all directories below it, deepest first. Cgroup
// directories hold only virtual files, so rmdir is the only call that works
// (os.RemoveAll would try to unlink them). A missing dir is success; EBUSY
// (tasks left) is reported as ErrBusy.
func rmdirTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk %s: %w", dir, err)
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		err := syscall.Rmdir(d)
		switch {
		case err == nil, errors.Is(err, syscall.ENOENT):
		case errors.Is(err, syscall.EBUSY):
			return fmt.Errorf("rmdir %s: %w", d, ErrBusy)
		default:
			return fmt.Errorf("rmdir %s: %w", d, err)
		}
	}
	return nil
}

// subdirs lists the names of dir's subdirectories; a missing dir gives none.
func subdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// readPids parses a cgroup.procs file.
func readPids(file string) ([]int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// readKey returns the value of "key N" in a flat-keyed file such as
// memory.oom_control or memory.events (0 when the key is absent).
func readKey(file, key string) (uint64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", file, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == key {
			v, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s in %s: %w", key, file, err)
			}
			return v, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", file, err)
	}
	return 0, nil
}

// v1Mounts returns the mount points of all cgroup v1 hierarchies.
func v1Mounts() ([]string, error) { return cgroupMounts("cgroup") }

// unifiedMounts returns the mount points of cgroup2 filesystems; on a hybrid
// host that is the unified tree beside the v1 hierarchies
// (/sys/fs/cgroup/unified), in which runc creates container cgroups too.
func unifiedMounts() ([]string, error) { return cgroupMounts("cgroup2") }

// cgroupMounts returns the mount points of filesystems of type fstype, from
// /proc/self/mountinfo (fields after " - " are fstype, source, options).
func cgroupMounts(fstype string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	return parseMounts(string(data), fstype), nil
}

// parseMounts picks the mount points of fstype out of mountinfo text.
func parseMounts(mountinfo, fstype string) []string {
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) >= 5 && len(tail) >= 1 && tail[0] == fstype {
			out = append(out, fields[4])
		}
	}
	return out
}
