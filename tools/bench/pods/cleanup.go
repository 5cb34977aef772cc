package main

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

	"github.com/vishvananda/netlink"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/orch/orch/agent/network"
)

// sweep removes everything the run made on the host, whatever state it
// ended in: processes (agent, server, containerd, shims, containers),
// mounts, network namespaces, the bridge, iptables chains, cgroups, the
// containerd state dir. The caller removes the work dir afterwards. It is
// the same sweep as test/e2e's agentEnv.cleanup.
func (e *env) sweep() {
	e.agent.stop(20 * time.Second)
	e.server.stop(10 * time.Second)
	killProcs(e.log, func(pid int, cmdline string) bool {
		return strings.Contains(cmdline, e.stateBase) || strings.Contains(cmdline, e.work) ||
			inCgroup(pid, "/"+e.cgroupRoot+"/") || inCgroup(pid, "/"+e.baseCgroup+"/")
	})
	unmountUnder(e.log, e.stateBase, e.work, filepath.Join("/run/netns", e.netnsPfx))
	if m, _ := filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*")); len(m) > 0 {
		for _, p := range m {
			_ = os.Remove(p)
		}
	}
	if l, err := netlink.LinkByName(e.bridge); err == nil {
		_ = netlink.LinkDel(l)
	}
	e.cleanIPTables()
	for _, root := range []string{e.cgroupRoot, e.baseCgroup} {
		for _, dir := range cgroupDirs(root) {
			if err := rmdirTree(dir); err != nil {
				e.log.Warn("cgroup cleanup", zap.Error(err))
			}
		}
	}
	_ = os.RemoveAll(e.stateBase)
}

// cleanIPTables removes the run's NAT and filter chains (and the jumps to
// them) with agent/network's own Cleanup.
func (e *env) cleanIPTables() {
	ipam, err := os.MkdirTemp("", "orch-podbench-ipam-")
	if err != nil {
		e.log.Warn("iptables cleanup", zap.Error(err))
		return
	}
	defer os.RemoveAll(ipam)
	m, err := network.New(e.log.Named("cleanup"), network.Config{BridgeName: e.bridge, PodCIDR: e.podCIDR,
		ClusterCIDR: e.podCIDR, IPAMDir: ipam, NetnsPrefix: e.netnsPfx,
		NATChain: e.chainPfx + "POSTROUTING", FilterChain: e.chainPfx + "FORWARD"})
	if err != nil {
		e.log.Warn("iptables cleanup", zap.Error(err))
		return
	}
	defer m.Close()
	if err := m.Cleanup(); err != nil {
		e.log.Warn("iptables cleanup", zap.Error(err))
	}
}

// leftovers lists what the sweep should have removed but is still there.
func (e *env) leftovers() []string {
	var out []string
	if m, _ := filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*")); len(m) > 0 {
		out = append(out, fmt.Sprintf("netns %v", m))
	}
	if _, err := netlink.LinkByName(e.bridge); err == nil {
		out = append(out, "bridge "+e.bridge)
	}
	if m := mountsUnder(e.stateBase, e.work, filepath.Join("/run/netns", e.netnsPfx)); len(m) > 0 {
		out = append(out, fmt.Sprintf("mounts %v", m))
	}
	for _, root := range []string{e.cgroupRoot, e.baseCgroup} {
		if d := cgroupDirs(root); len(d) > 0 {
			out = append(out, fmt.Sprintf("cgroups %v", d))
		}
	}
	if _, err := os.Stat(e.stateBase); err == nil {
		out = append(out, "dir "+e.stateBase)
	}
	return out
}

func killProcs(log *zap.Logger, match func(pid int, cmdline string) bool) {
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
	log.Warn("cleanup: processes still alive after SIGKILL")
}

func inCgroup(pid int, part string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return err == nil && strings.Contains(string(b), part)
}

// mountsUnder lists mount points starting with any prefix, deepest first.
func mountsUnder(prefixes ...string) []string {
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

func unmountUnder(log *zap.Logger, prefixes ...string) {
	for _, m := range mountsUnder(prefixes...) {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			log.Warn("cleanup: unmount", zap.String("path", m), zap.Error(err))
		}
	}
}

// cgroupDirs are root in every mounted cgroup hierarchy (v1 and v2).
func cgroupDirs(root string) []string {
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

func rmdirTree(dir string) error {
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
