// Package hostclean removes what a test or benchmark left on the host:
// processes, mounts and cgroup directories under the names it used. It is
// shared by test/e2e and tools/bench/pods, which start real orch processes
// with their own bridge, netns prefix, cgroup root and state dirs.
package hostclean

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// KillProcs SIGKILLs every process match accepts (by pid and command
// line), retrying until none is left or about 2 s have passed.
func KillProcs(logf func(format string, args ...any), match func(pid int, cmdline string) bool) {
	for round := 0; round < 20; round++ {
		entries, _ := os.ReadDir("/proc")
		found := 0
		for _, ent := range entries {
			pid, err := strconv.Atoi(ent.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err != nil {
				continue
			}
			if match(pid, strings.ReplaceAll(string(b), "\x00", " ")) {
				found++
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if found == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	logf("cleanup: processes still alive after SIGKILL")
}

// Instance says which processes belong to one orch instance: its binary
// run with its data dir (instances may share a binary), anything naming
// its run dir (containerd, shims) and anything in its cgroup root.
type Instance struct {
	Bin, DataDir, RunDir, CgroupRoot string
}

// Processes lists the live processes of in as "proc <pid> <cmdline>".
func Processes(in Instance) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() || Zombie(pid) {
			continue
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		ownBin := strings.TrimSuffix(exe, " (deleted)") == in.Bin && strings.Contains(cmdline, " --data-dir "+in.DataDir+" ")
		if ownBin || strings.Contains(cmdline, in.RunDir+"/") || InCgroup(pid, "/"+in.CgroupRoot+"/") {
			out = append(out, fmt.Sprintf("proc %d %s", pid, cmdline))
		}
	}
	return out
}

// Zombie tells whether pid is gone or a zombie.
func Zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// InCgroup tells whether pid is in a cgroup whose path contains part.
func InCgroup(pid int, part string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return err == nil && strings.Contains(string(b), part)
}

// MountsUnder lists mount points starting with any prefix, deepest first.
func MountsUnder(prefixes ...string) []string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(f[4], p) {
				out = append(out, f[4])
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// UnmountUnder lazily unmounts every mount point under the prefixes.
func UnmountUnder(logf func(format string, args ...any), prefixes ...string) {
	for _, m := range MountsUnder(prefixes...) {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			logf("cleanup: unmount %s: %v", m, err)
		}
	}
}

// CgroupDirs lists root in every mounted cgroup hierarchy (v1 and v2) where it exists.
func CgroupDirs(root string) []string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, tail := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(tail) >= 1 && (tail[0] == "cgroup" || tail[0] == "cgroup2") {
			if _, err := os.Stat(filepath.Join(f[4], root)); err == nil {
				out = append(out, filepath.Join(f[4], root))
			}
		}
	}
	return out
}

// RemoveCgroups removes the cgroup directories named root in every
// hierarchy (RmdirTree), logging what cannot be removed.
func RemoveCgroups(logf func(format string, args ...any), root string) {
	for _, d := range CgroupDirs(root) {
		if err := RmdirTree(d); err != nil {
			logf("cgroup cleanup: %v", err)
		}
	}
}

// RmdirTree removes the directory tree of a cgroup deepest first, retrying
// while tasks drain.
func RmdirTree(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var errs []error
	for _, d := range dirs {
		for i := 0; ; i++ {
			err := os.Remove(d)
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				break
			}
			if i == 20 {
				errs = append(errs, err)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}
