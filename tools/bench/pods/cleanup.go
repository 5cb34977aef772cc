package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap"

	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/test/hostclean"
)

// sweep removes everything the run made on the host, whatever state it
// ended in: processes (agent, server, containerd, shims, containers),
// mounts, network namespaces, the bridge, iptables chains, cgroups, the
// containerd state dir. The caller removes the work dir afterwards. It is
// the same sweep as test/e2e's agentEnv.cleanup.
func (e *env) sweep() {
	e.agent.stop(20 * time.Second)
	e.server.stop(10 * time.Second)
	hostclean.KillProcs(e.log.Sugar().Warnf, func(pid int, cmdline string) bool {
		return strings.Contains(cmdline, e.stateBase) || strings.Contains(cmdline, e.work) ||
			hostclean.InCgroup(pid, "/"+e.cgroupRoot+"/") || hostclean.InCgroup(pid, "/"+e.baseCgroup+"/")
	})
	hostclean.UnmountUnder(e.log.Sugar().Warnf, e.stateBase, e.work, filepath.Join("/run/netns", e.netnsPfx))
	if m, _ := filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*")); len(m) > 0 {
		for _, p := range m {
			_ = os.Remove(p)
		}
	}
	for _, name := range []string{e.bridge, e.dnsLink} {
		if l, err := netlink.LinkByName(name); name != "" && err == nil {
			_ = netlink.LinkDel(l)
		}
	}
	e.cleanIPTables()
	for _, root := range []string{e.cgroupRoot, e.baseCgroup} {
		for _, dir := range hostclean.CgroupDirs(root) {
			if err := hostclean.RmdirTree(dir); err != nil {
				e.log.Warn("cgroup cleanup", zap.Error(err))
			}
		}
	}
	_ = os.RemoveAll(e.stateBase)
}

// cleanIPTables removes the run's chains (and the jumps to them): the pod
// network's with agent/network's own Cleanup, then every other chain of
// the run's prefix.
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
	// The Service proxy, host ports and network policy keep their chains
	// when the agent stops (as kube-proxy): remove everything of the prefix.
	hostclean.IPTablesChains(e.log.Sugar().Warnf, e.chainPfx)
}

// leftovers lists what the sweep should have removed but is still there.
func (e *env) leftovers() []string {
	var out []string
	if m, _ := filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*")); len(m) > 0 {
		out = append(out, fmt.Sprintf("netns %v", m))
	}
	for _, name := range []string{e.bridge, e.dnsLink} {
		if _, err := netlink.LinkByName(name); name != "" && err == nil {
			out = append(out, "link "+name)
		}
	}
	if m := hostclean.MountsUnder(e.stateBase, e.work, filepath.Join("/run/netns", e.netnsPfx)); len(m) > 0 {
		out = append(out, fmt.Sprintf("mounts %v", m))
	}
	for _, root := range []string{e.cgroupRoot, e.baseCgroup} {
		if d := hostclean.CgroupDirs(root); len(d) > 0 {
			out = append(out, fmt.Sprintf("cgroups %v", d))
		}
	}
	if _, err := os.Stat(e.stateBase); err == nil {
		out = append(out, "dir "+e.stateBase)
	}
	return out
}
