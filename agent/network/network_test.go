package network

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap/zaptest"
)

func TestEnsureHostIdempotent(t *testing.T) {
	e := newTestEnv(t)
	for i := 0; i < 2; i++ {
		if err := e.m.EnsureHost(); err != nil {
			t.Fatalf("EnsureHost #%d: %v", i, err)
		}
	}
	br, err := bridgeByName(e.cfg.BridgeName)
	if err != nil {
		t.Fatal(err)
	}
	if br.Attrs().Flags&net.FlagUp == 0 {
		t.Error("bridge is not up")
	}
	gw := e.m.cfg.gateway
	assertAddrs(t, br, gw.String())
	if b, _ := os.ReadFile(SysctlIPForward); strings.TrimSpace(string(b)) != "1" {
		t.Errorf("ip_forward = %q", b)
	}

	// A foreign address on the bridge is replaced by the gateway.
	other := &net.IPNet{IP: net.IPv4(10, 250, byte(e.octet), 77).To4(), Mask: gw.Mask}
	if err := netlink.AddrAdd(br, &netlink.Addr{IPNet: other}); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureBridge(zaptest.NewLogger(t), e.cfg.BridgeName, gw); err != nil {
		t.Fatal(err)
	}
	assertAddrs(t, br, gw.String())
}

func TestEnsureBridgeRefusesNonBridge(t *testing.T) {
	requireRoot(t)
	name := "orcht" + randHex(t, 3)
	la := netlink.NewLinkAttrs()
	la.Name = name
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: name + "p"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteLink(name) })
	gw := &net.IPNet{IP: net.IPv4(10, 250, 0, 1).To4(), Mask: net.CIDRMask(24, 32)}
	if _, err := EnsureBridge(zaptest.NewLogger(t), name, gw); err == nil {
		t.Fatal("EnsureBridge on a dummy link succeeded")
	}
}

func assertAddrs(t *testing.T, l netlink.Link, want ...string) {
	t.Helper()
	addrs, err := netlink.AddrList(l, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range addrs {
		got = append(got, a.IPNet.String())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("addresses of %s = %v, want %v", l.Attrs().Name, got, want)
	}
}

func TestTwoPodsTalk(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	a, b := e.newPodID(t), e.newPodID(t)
	sa, sb := e.setup(t, a), e.setup(t, b)
	if ids, err := e.m.PodIDs(); err != nil || len(ids) != 2 {
		t.Fatalf("PodIDs = %v, %v", ids, err)
	}
	if sa.IP.IP.Equal(sb.IP.IP) || !e.m.cfg.podNet.Contains(sa.IP.IP) {
		t.Fatalf("pod IPs %s and %s", sa.IP, sb.IP)
	}
	if len(sa.HostVeth) > 15 || sa.Interface != "eth0" || sa.NetnsPath != e.m.NetnsPath(a) {
		t.Fatalf("status: %+v", sa)
	}
	if !hairpinFromSysfs(t, sa.HostVeth) {
		t.Errorf("hairpin off on %s", sa.HostVeth)
	}

	// b -> a over TCP, and a sees b's own address (no NAT on the bridge).
	ln := listenIn(t, sa.NetnsPath, sa.IP.IP.String()+":0")
	seen, err := dialFrom(sb.NetnsPath, ln.Addr().String())
	if err != nil {
		t.Fatalf("pod b -> pod a: %v", err)
	}
	if !strings.HasPrefix(seen, sb.IP.IP.String()+":") {
		t.Errorf("pod a saw %s, want %s", seen, sb.IP.IP)
	}
	ping(t, sa.NetnsPath, sb.IP.IP.String())
	ping(t, sb.NetnsPath, sa.IP.IP.String())

	// Each pod reaches the gateway (a listener on the host's bridge address).
	gw := listenIn(t, "", sa.Gateway.String()+":0")
	for _, st := range []*PodNetStatus{sa, sb} {
		if _, err := dialFrom(st.NetnsPath, gw.Addr().String()); err != nil {
			t.Errorf("pod %s -> gateway: %v", st.IP, err)
		}
		ping(t, st.NetnsPath, st.Gateway.String())
	}

	// Setting a pod up again returns the same network.
	again := e.setup(t, a)
	if !again.IP.IP.Equal(sa.IP.IP) || again.HostVeth != sa.HostVeth {
		t.Errorf("second SetupPod: %+v, first %+v", again, sa)
	}

	for _, id := range []string{a, b} {
		for i := 0; i < 2; i++ { // idempotent
			if err := e.m.TeardownPod(t.Context(), id); err != nil {
				t.Fatalf("TeardownPod #%d: %v", i, err)
			}
		}
		e.assertPodGone(t, id)
	}
	e.assertNothingLeft(t)
}

func hairpinFromSysfs(t *testing.T, port string) bool {
	b, err := os.ReadFile("/sys/class/net/" + port + "/brport/hairpin_mode")
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

func TestMasqueradeToOutside(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	outside, hostIP := e.outsideHost(t)
	id := e.newPodID(t)
	st := e.setup(t, id)
	ln := listenIn(t, outside, "10.251.0.2:0")
	seen, err := dialFrom(st.NetnsPath, ln.Addr().String())
	if err != nil {
		t.Fatalf("pod -> outside host: %v", err)
	}
	if !strings.HasPrefix(seen, hostIP+":") {
		t.Fatalf("outside host saw %s, want the masqueraded node address %s", seen, hostIP)
	}
}

// outsideHost makes a namespace outside the cluster CIDR (10.251.0.2/30)
// joined to the host (10.251.0.1) by a veth, and returns its path and the
// host's address on that link.
func (e *testEnv) outsideHost(t *testing.T) (string, string) {
	path := e.m.NetnsPath("outside-" + e.suffix)
	if _, err := ensureNetns(path); err != nil {
		t.Fatal(err)
	}
	e.cleanup = append(e.cleanup, func() { _ = removeNetns(path) })
	hostEnd := "orcht" + e.suffix + "o"
	e.cleanup = append(e.cleanup, func() { _ = deleteLink(hostEnd) })
	cmds := [][]string{
		{"ip", "link", "add", hostEnd, "type", "veth", "peer", "name", "eth0", "netns", path},
		{"ip", "addr", "add", "10.251.0.1/30", "dev", hostEnd},
		{"ip", "link", "set", hostEnd, "up"},
		{"nsenter", "--net=" + path, "ip", "addr", "add", "10.251.0.2/30", "dev", "eth0"},
		{"nsenter", "--net=" + path, "ip", "link", "set", "eth0", "up"},
	}
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	return path, "10.251.0.1"
}

func TestSetupTeardownCyclesLeakNothing(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	before := countOwnLinks(t, e.cfg.BridgeName)
	for i := 0; i < 100; i++ {
		id := e.newPodID(t)
		e.setup(t, id)
		if err := e.m.TeardownPod(t.Context(), id); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		delete(e.podIDs, id)
		e.assertPodGone(t, id)
	}
	if after := countOwnLinks(t, e.cfg.BridgeName); after != before {
		t.Errorf("links before %d, after %d", before, after)
	}
	e.assertNothingLeft(t)
}

// countOwnLinks counts this test's links: its bridge and the ports on it.
// Links of anything else on the host (other tests running in parallel,
// a live orch) are not counted, so the check cannot flake on them.
func countOwnLinks(t *testing.T, bridge string) int {
	br, err := netlink.LinkByName(bridge)
	if err != nil {
		t.Fatal(err)
	}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range links {
		if l.Attrs().Index == br.Attrs().Index || l.Attrs().MasterIndex == br.Attrs().Index {
			n++
		}
	}
	return n
}

var errInjected = errors.New("injected failure")

func TestRollbackAfterInjectedFailure(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"ipam", "netns", "veth", "bridge", "pod-interface"} {
		t.Run(step, func(t *testing.T) {
			id := e.newPodID(t)
			e.m.stepHook = failAt(step)
			_, err := e.m.SetupPod(t.Context(), PodNet{ID: id, Name: "p", Namespace: "default"})
			e.m.stepHook = nil
			if !errors.Is(err, errInjected) {
				t.Fatalf("SetupPod err = %v, want the injected failure", err)
			}
			e.assertPodGone(t, id)
			e.assertNothingLeft(t)
			e.setup(t, id) // nothing stale blocks a retry
			if err := e.m.TeardownPod(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func failAt(step string) func(string) error {
	return func(s string) error {
		if s == step {
			return fmt.Errorf("at %s: %w", s, errInjected)
		}
		return nil
	}
}

// A failed retry of SetupPod must not tear down the pod's existing network.
func TestFailedRetryKeepsExistingPod(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	a, b := e.newPodID(t), e.newPodID(t)
	sa, sb := e.setup(t, a), e.setup(t, b)
	e.m.stepHook = failAt("pod-interface")
	_, err := e.m.SetupPod(t.Context(), PodNet{ID: a})
	e.m.stepHook = nil
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v", err)
	}
	ln := listenIn(t, sa.NetnsPath, sa.IP.IP.String()+":0")
	if _, err := dialFrom(sb.NetnsPath, ln.Addr().String()); err != nil {
		t.Fatalf("pod a unreachable after a failed retry: %v", err)
	}
}

func TestMasqueradeRulesIdempotentAndCleanup(t *testing.T) {
	e := newTestEnv(t)
	ipt := e.m.ipt
	for i := 0; i < 2; i++ {
		if err := e.m.EnsureMasquerade(e.cfg.ClusterCIDR, e.cfg.PodCIDR); err != nil {
			t.Fatal(err)
		}
	}
	assertRules(t, e, "nat", e.cfg.NATChain, 2)
	assertRules(t, e, "filter", e.cfg.FilterChain, 2)
	assertJumps(t, e, "nat", "POSTROUTING", e.cfg.NATChain, 1)
	assertJumps(t, e, "filter", "FORWARD", e.cfg.FilterChain, 1)
	rules, _ := ipt.List("nat", e.cfg.NATChain)
	if !strings.Contains(strings.Join(rules, "\n"), `--comment "orch: masquerade pod traffic leaving the cluster"`) {
		t.Errorf("nat rules lack the orch comment: %v", rules)
	}

	// A stray rule in orch's chain is removed; a changed podCIDR rewrites it.
	if err := ipt.Append("nat", e.cfg.NATChain, "-s", "192.0.2.0/24", "-j", "RETURN"); err != nil {
		t.Fatal(err)
	}
	newPod := fmt.Sprintf("10.250.%d.0/24", (e.octet+1)%250)
	if err := e.m.EnsureMasquerade(e.cfg.ClusterCIDR, newPod); err != nil {
		t.Fatal(err)
	}
	assertRules(t, e, "nat", e.cfg.NATChain, 2)
	if ok, _ := ipt.Exists("nat", e.cfg.NATChain, "-s", newPod, "-d", e.cfg.ClusterCIDR, "-m", "comment",
		"--comment", "orch: no masquerade inside the cluster", "-j", "RETURN"); !ok {
		t.Error("rules not rewritten for the new podCIDR")
	}

	for i := 0; i < 2; i++ {
		if err := e.m.Cleanup(); err != nil {
			t.Fatalf("Cleanup #%d: %v", i, err)
		}
	}
	for _, tc := range [][2]string{{"nat", e.cfg.NATChain}, {"filter", e.cfg.FilterChain}} {
		if ok, _ := ipt.ChainExists(tc[0], tc[1]); ok {
			t.Errorf("chain %s/%s left", tc[0], tc[1])
		}
	}
	assertJumps(t, e, "nat", "POSTROUTING", e.cfg.NATChain, 0)
	assertJumps(t, e, "filter", "FORWARD", e.cfg.FilterChain, 0)
}

func assertRules(t *testing.T, e *testEnv, table, chain string, n int) {
	t.Helper()
	rules, err := e.m.ipt.List(table, chain)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != n+1 {
		t.Fatalf("%s/%s has %d rules, want %d: %v", table, chain, len(rules)-1, n, rules)
	}
}

func assertJumps(t *testing.T, e *testEnv, table, from, target string, n int) {
	t.Helper()
	rules, err := e.m.ipt.List(table, from)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, r := range rules {
		if strings.HasSuffix(r, "-j "+target) {
			got++
		}
	}
	if got != n {
		t.Fatalf("%d jumps %s -> %s, want %d", got, from, target, n)
	}
}

func TestDetectIPTables(t *testing.T) {
	requireRoot(t)
	got := DetectIPTables(zaptest.NewLogger(t))
	out, err := exec.Command(got, "-V").CombinedOutput()
	if err != nil {
		t.Fatalf("%s -V: %v", got, err)
	}
	t.Logf("detected %s: %s", got, strings.TrimSpace(string(out)))
	def, err := exec.Command("iptables", "-V").CombinedOutput()
	if err == nil && strings.Contains(string(def), "nf_tables") && got != "iptables-nft" {
		// Only a host with a populated legacy ruleset may disagree with the default.
		if st := saveStats("iptables-legacy-save"); st.rules == 0 && !st.ours {
			t.Errorf("detected %s on an nf_tables host with an empty legacy ruleset", got)
		}
	}
}

// SetupPod recovers from leftovers of an interrupted earlier attempt: a plain
// file where the namespace should be mounted and a host veth whose peer is
// not in the pod's namespace.
func TestSetupRecoversFromLeftovers(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	id := e.newPodID(t)
	if err := os.MkdirAll(e.cfg.NetnsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.m.NetnsPath(id), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	la := netlink.NewLinkAttrs()
	la.Name = HostVethName(id)
	peer := "orcht" + e.suffix + "s"
	t.Cleanup(func() { _ = deleteLink(peer) })
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: peer}); err != nil {
		t.Fatal(err)
	}
	st := e.setup(t, id)
	if !isNetns(st.NetnsPath) {
		t.Fatalf("%s is not a namespace", st.NetnsPath)
	}
	if _, err := netlink.LinkByName(peer); !isNotFound(err) {
		t.Errorf("stale veth peer %s still present", peer)
	}
	gw := listenIn(t, "", st.Gateway.String()+":0")
	if _, err := dialFrom(st.NetnsPath, gw.Addr().String()); err != nil {
		t.Fatalf("pod -> gateway: %v", err)
	}
}

func TestConcurrentPods(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 12)
	for i := range ids {
		ids[i] = e.newPodID(t)
	}
	errs := make(chan error, len(ids))
	for _, id := range ids {
		go func() {
			st, err := e.m.SetupPod(t.Context(), PodNet{ID: id})
			if err == nil {
				err = checkPodMTU(st, e.m.mtu)
			}
			if err == nil {
				err = e.m.TeardownPod(t.Context(), id)
			}
			errs <- err
		}()
	}
	for range ids {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, id := range ids {
		e.assertPodGone(t, id)
	}
	e.assertNothingLeft(t)
}

func checkPodMTU(st *PodNetStatus, want int) error {
	var mtu int
	err := inNetns(st.NetnsPath, func() error {
		ifc, err := net.InterfaceByName(PodInterface)
		if err == nil {
			mtu = ifc.MTU
		}
		return err
	})
	if err == nil && mtu != want {
		err = fmt.Errorf("pod %s: eth0 MTU %d, want %d", st.ID, mtu, want)
	}
	return err
}

// The gateway's MAC must not change when a pod goes: the kernel would
// otherwise move an unpinned bridge to its lowest remaining port MAC, and
// every other pod would lose the gateway until its ARP entry expired.
func TestBridgeMACStaysWhenPodsGo(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	ids := []string{e.newPodID(t), e.newPodID(t), e.newPodID(t)}
	veths := map[string]string{}
	for _, id := range ids {
		veths[id] = e.setup(t, id).HostVeth
	}
	bridgeMAC := func() string {
		l, err := netlink.LinkByName(e.cfg.BridgeName)
		if err != nil {
			t.Fatal(err)
		}
		return l.Attrs().HardwareAddr.String()
	}
	before := bridgeMAC()
	// Tear down the pod whose veth has the lowest MAC first: the one an
	// unpinned bridge would have taken its address from.
	sort.Slice(ids, func(i, j int) bool { return vethMAC(t, veths[ids[i]]) < vethMAC(t, veths[ids[j]]) })
	for _, id := range ids[:2] {
		if err := e.m.TeardownPod(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if got := bridgeMAC(); got != before {
			t.Fatalf("bridge MAC changed from %s to %s when pod %s (veth %s) went", before, got, id, veths[id])
		}
	}
	if err := e.m.EnsureHost(); err != nil { // idempotent, keeps the MAC
		t.Fatal(err)
	}
	if got := bridgeMAC(); got != before {
		t.Fatalf("EnsureHost changed the bridge MAC from %s to %s", before, got)
	}
}

func vethMAC(t *testing.T, name string) string {
	l, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l.Attrs().HardwareAddr.String()
}
