package killall

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/orch/orch/agent/dns"
	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/test/hostclean"
)

// instance is one set of host objects under names of its own, the ones an
// agent started with --bridge-name, --netns-prefix, ... would use.
type instance struct {
	id, bin                       string
	dataDir, runDir               string
	bridge, vxlan, netnsPfx       string
	chainPfx, cgroupRoot, podCIDR string
	procs                         []*exec.Cmd
}

func newInstance(t *testing.T, dataDir, bin string) *instance {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	id := hex.EncodeToString(b)
	return &instance{id: id, bin: bin, dataDir: dataDir, runDir: "/run/orchk-" + id,
		bridge: "orchk" + id, vxlan: "orchkv" + id, netnsPfx: "orchk" + id + "-",
		chainPfx: "ORCHK" + strings.ToUpper(id) + "-", cgroupRoot: "orchk-" + id,
		podCIDR: fmt.Sprintf("10.245.%d.0/24", 1+int(b[0])%250)}
}

// env points orch-killall.sh at the instance.
func (in *instance) env() []string {
	return append(os.Environ(), "ORCH_DATA_DIR="+in.dataDir, "ORCH_RUN_DIR="+in.runDir,
		"ORCH_BRIDGE="+in.bridge, "ORCH_DNS_LINK="+dns.LinkName(in.bridge), "ORCH_VXLAN_DEVICE="+in.vxlan,
		"ORCH_NETNS_DIR="+network.DefaultNetnsDir, "ORCH_NETNS_PREFIX="+in.netnsPfx,
		"ORCH_CHAIN_PREFIX="+in.chainPfx, "ORCH_CGROUP_ROOT="+in.cgroupRoot, "ORCH_SERVICES=", "ORCH_BIN="+in.bin)
}

func (in *instance) netConfig(t *testing.T) network.Config {
	ipam := filepath.Join(in.dataDir, "agent", "ipam")
	if err := os.MkdirAll(ipam, 0o700); err != nil {
		t.Fatal(err)
	}
	return network.Config{BridgeName: in.bridge, PodCIDR: in.podCIDR, ClusterCIDR: in.podCIDR, IPAMDir: ipam,
		NetnsPrefix: in.netnsPfx, NATChain: in.chainPfx + "POSTROUTING", FilterChain: in.chainPfx + "FORWARD"}
}

// create makes what an agent with two pods leaves behind when it dies.
func (in *instance) create(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { in.cleanup(t) })
	m, err := network.New(zaptest.NewLogger(t), in.netConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.EnsureHost(); err != nil {
		t.Fatalf("EnsureHost: %v", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := m.SetupPod(context.Background(), network.PodNet{ID: fmt.Sprintf("%s-pod%d", in.id, i), Name: "p", Namespace: "default"}); err != nil {
			t.Fatalf("SetupPod: %v", err)
		}
	}
	_, podNet, _ := net.ParseCIDR(in.podCIDR)
	dnsIP := podNet.IP.To4()
	dnsIP = net.IPv4(dnsIP[0], dnsIP[1], dnsIP[2], 250)
	if err := dns.EnsureLink(dns.LinkName(in.bridge), dnsIP); err != nil {
		t.Fatalf("dns link: %v", err)
	}
	n, _ := strconv.ParseUint(in.id, 16, 32) // 24 bits
	if err := netlink.LinkAdd(&netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: in.vxlan}, VxlanId: int(n) | 1<<23,
		SrcAddr: net.IPv4(127, 0, 0, 1), Port: 40000 + int(n%20000)}); err != nil {
		t.Fatalf("vxlan: %v", err)
	}
	in.legacyChain(t)
	in.mounts(t)
	in.processes(t)
}

// legacyChain adds a chain in iptables-legacy's mangle table with a jump
// to it from OUTPUT whose comment needs shell quoting, as a host whose
// agent picked the legacy backend has. The chain is empty: harmless.
func (in *instance) legacyChain(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("iptables-legacy"); err != nil {
		t.Log("no iptables-legacy: legacy chains not tested")
		return
	}
	chain := in.chainPfx + "LEGACY"
	jump := []string{"-w", "-t", "mangle", "%s", "OUTPUT", "-m", "comment", "--comment", "orch: legacy test's jump", "-j", chain}
	t.Cleanup(func() { // hostclean cannot: it does not undo iptables-save's \' quoting
		del := append([]string(nil), jump...)
		del[3] = "-D"
		_ = exec.Command("iptables-legacy", del...).Run()
		_ = exec.Command("iptables-legacy", "-w", "-t", "mangle", "-X", chain).Run()
	})
	add := append([]string(nil), jump...)
	add[3] = "-A"
	for _, args := range [][]string{{"-w", "-t", "mangle", "-N", chain}, add} {
		if out, err := exec.Command("iptables-legacy", args...).CombinedOutput(); err != nil {
			t.Fatalf("iptables-legacy %v: %v %s", args, err, out)
		}
	}
}

// mounts makes a tmpfs run dir with a container rootfs mount inside (the
// managed containerd's state) and a pod volume bind mount in the data dir.
func (in *instance) mounts(t *testing.T) {
	t.Helper()
	rootfs := filepath.Join(in.runDir, "containerd", "io.containerd.runtime.v2.task", "orch", "c1", "rootfs")
	vol := filepath.Join(in.dataDir, "agent", "pods", "uid1", "volumes", "kubernetes.io~empty-dir", "v")
	src := t.TempDir()
	for _, step := range []struct {
		dir, src, fstype string
		flags            uintptr
	}{
		{in.runDir, "tmpfs", "tmpfs", 0},
		{rootfs, "tmpfs", "tmpfs", 0},
		{vol, src, "", unix.MS_BIND},
	} {
		if err := os.MkdirAll(step.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(step.src, step.dir, step.fstype, step.flags, ""); err != nil {
			t.Fatalf("mount %s: %v", step.dir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(in.runDir, "containerd", "shim.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// processes starts a "shim" naming the run dir and a "container" in the
// instance's cgroups.
func (in *instance) processes(t *testing.T) {
	t.Helper()
	shim := exec.Command("tail", "-f", filepath.Join(in.runDir, "containerd", "shim.log"))
	ctr := exec.Command("sleep", "3600")
	for _, c := range []*exec.Cmd{shim, ctr} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		in.procs = append(in.procs, c)
		go func(c *exec.Cmd) { _ = c.Wait() }(c)
	}
	for _, mnt := range cgroupMounts() {
		if strings.Contains(mnt, "cpuset") {
			continue // a cpuset cgroup takes tasks only once its cpus and mems are set
		}
		dir := filepath.Join(mnt, in.cgroupRoot, "podx", "ctr")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Logf("cgroup %s: %v", dir, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(ctr.Process.Pid)), 0o644); err != nil {
			t.Logf("cgroup %s: %v", dir, err)
		}
	}
}

func cgroupMounts() []string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, tail := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(tail) >= 1 && (tail[0] == "cgroup" || tail[0] == "cgroup2") {
			out = append(out, f[4])
		}
	}
	return out
}

// leftovers lists, with hostclean, every host object of the instance.
func (in *instance) leftovers() []string {
	var out []string
	for _, l := range []string{in.bridge, dns.LinkName(in.bridge), in.vxlan} {
		if _, err := netlink.LinkByName(l); err == nil {
			out = append(out, "link "+l)
		}
	}
	links, _ := netlink.LinkList()
	for _, l := range links {
		if l.Attrs().MasterIndex != 0 {
			if br, err := netlink.LinkByIndex(l.Attrs().MasterIndex); err == nil && br.Attrs().Name == in.bridge {
				out = append(out, "port "+l.Attrs().Name)
			}
		}
	}
	ns, _ := filepath.Glob(filepath.Join(network.DefaultNetnsDir, in.netnsPfx+"*"))
	for _, n := range ns {
		out = append(out, "netns "+n)
	}
	for _, m := range hostclean.MountsUnder(in.runDir, in.dataDir+"/", filepath.Join(network.DefaultNetnsDir, in.netnsPfx)) {
		out = append(out, "mount "+m)
	}
	for _, c := range chains(in.chainPfx) {
		out = append(out, "chain "+c)
	}
	for _, d := range hostclean.CgroupDirs(in.cgroupRoot) {
		out = append(out, "cgroup "+d)
	}
	for _, p := range in.procs {
		if unix.Kill(p.Process.Pid, 0) == nil && !hostclean.Zombie(p.Process.Pid) {
			out = append(out, fmt.Sprintf("process %d %v", p.Process.Pid, p.Args))
		}
	}
	out = append(out, in.processList()...)
	if _, err := os.Stat(in.runDir); err == nil {
		out = append(out, "dir "+in.runDir)
	}
	sort.Strings(out)
	return out
}

// processList lists the processes of the instance the way an operator
// would look for them: the orch binary, anything naming the run dir, and
// anything in the cgroup root.
func (in *instance) processList() []string {
	return hostclean.Processes(hostclean.Instance{Bin: in.bin, DataDir: in.dataDir, RunDir: in.runDir, CgroupRoot: in.cgroupRoot})
}

// chains lists cmd:table:chain for chains starting with prefix and rules
// jumping to them, in iptables-legacy and iptables-nft.
func chains(prefix string) []string {
	var out []string
	for _, cmd := range []string{"iptables-legacy", "iptables-nft", "ip6tables-legacy", "ip6tables-nft"} {
		for _, table := range []string{"filter", "nat", "mangle", "raw"} {
			b, err := exec.Command(cmd+"-save", "-t", table).Output()
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, ":"+prefix) || strings.Contains(line, "-j "+prefix) {
					out = append(out, cmd+":"+table+":"+strings.Fields(line)[0]+" "+line)
				}
			}
		}
	}
	return out
}

// cleanup removes whatever of the instance is left, with hostclean.
func (in *instance) cleanup(t *testing.T) {
	for _, p := range in.procs {
		_ = p.Process.Kill()
	}
	hostclean.UnmountUnder(t.Logf, in.runDir, in.dataDir+"/", filepath.Join(network.DefaultNetnsDir, in.netnsPfx))
	ns, _ := filepath.Glob(filepath.Join(network.DefaultNetnsDir, in.netnsPfx+"*"))
	for _, n := range ns {
		_ = os.Remove(n)
	}
	for _, l := range []string{in.bridge, dns.LinkName(in.bridge), in.vxlan} {
		if link, err := netlink.LinkByName(l); err == nil {
			_ = netlink.LinkDel(link)
		}
	}
	hostclean.IPTablesChains(t.Logf, in.chainPfx)
	hostclean.RemoveCgroups(t.Logf, in.cgroupRoot)
	_ = os.RemoveAll(in.runDir)
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out.String())
	}
	return out.String()
}
