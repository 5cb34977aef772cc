package netpol

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"go.uber.org/zap/zaptest"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// topo is a throwaway "node" network namespace routing between a client
// and a server namespace (10.99.1.2 → 10.99.2.2), so their traffic
// crosses the node's FORWARD chain. The test goroutine stays locked in
// the node namespace, so the iptables commands it runs act there.
type topo struct {
	node, client, server netns.NsHandle
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: real iptables tests need root (network namespaces)")
	}
}

func newTopo(t *testing.T) *topo {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	tp := &topo{}
	t.Cleanup(func() { // namespaces vanish with their last handle
		_ = netns.Set(orig)
		for _, h := range []netns.NsHandle{tp.node, tp.client, tp.server, orig} {
			if h.IsOpen() {
				h.Close()
			}
		}
		runtime.UnlockOSThread()
	})
	if tp.node, err = netns.New(); err != nil {
		t.Fatal(err)
	}
	for _, h := range []*netns.NsHandle{&tp.client, &tp.server} {
		if *h, err = netns.New(); err != nil {
			t.Fatal(err)
		}
		if err := netns.Set(tp.node); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	tp.link(t, tp.client, "npc", 1)
	tp.link(t, tp.server, "nps", 2)
	return tp
}

// link joins ns to the node: node side 10.99.<n>.1, ns side 10.99.<n>.2.
func (tp *topo) link(t *testing.T, ns netns.NsHandle, name string, n int) {
	t.Helper()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: name + "p", PeerNamespace: netlink.NsFd(ns)}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	up := func(h *netlink.Handle, link, addr string) {
		l, err := h.LinkByName(link)
		if err == nil {
			err = h.AddrAdd(l, &netlink.Addr{IPNet: mustCIDR(addr)})
		}
		if err == nil {
			err = h.LinkSetUp(l)
		}
		if err != nil {
			t.Fatalf("%s: %v", link, err)
		}
	}
	nodeH, err := netlink.NewHandleAt(tp.node)
	if err != nil {
		t.Fatal(err)
	}
	defer nodeH.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	up(nodeH, name, fmt.Sprintf("10.99.%d.1/24", n))
	up(h, name+"p", fmt.Sprintf("10.99.%d.2/24", n))
	if lo, err := h.LinkByName("lo"); err == nil {
		_ = h.LinkSetUp(lo)
	}
	gw := net.ParseIP(fmt.Sprintf("10.99.%d.1", n))
	if err := h.RouteAdd(&netlink.Route{Gw: gw}); err != nil {
		t.Fatal(err)
	}
}

func mustCIDR(s string) *net.IPNet {
	ip, n, _ := net.ParseCIDR(s)
	n.IP = ip
	return n
}

// inNS runs f on a thread in ns.
func inNS(ns netns.NsHandle, f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			return
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			return
		}
		f()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		} // else the thread dies with the goroutine
	}()
	<-done
}

// serve answers "ok" on 10.99.2.2:port in the server namespace.
func (tp *topo) serve(t *testing.T, port int) {
	t.Helper()
	var ln net.Listener
	var err error
	inNS(tp.server, func() { ln, err = net.Listen("tcp", fmt.Sprintf("10.99.2.2:%d", port)) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("ok"))
			_ = c.Close()
		}
	}()
}

// reach reports whether the client gets "ok" from the server's port. A
// dropped connection is only seen as a timeout, so when want is true a
// miss is tried again (a loaded machine can be slow to answer) and when
// want is false one 700 ms attempt decides.
func (tp *topo) reach(port int, want bool) bool {
	attempts, timeout := 1, 700*time.Millisecond
	if want {
		attempts, timeout = 5, 2*time.Second
	}
	for i := 0; i < attempts; i++ {
		if tp.reachOnce(port, timeout) {
			return true
		}
	}
	return false
}

func (tp *topo) reachOnce(port int, timeout time.Duration) bool {
	var c net.Conn
	var err error
	inNS(tp.client, func() { c, err = net.DialTimeout("tcp", fmt.Sprintf("10.99.2.2:%d", port), timeout) })
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	b, err := io.ReadAll(c)
	return err == nil && string(b) == "ok"
}

func iptablesBackends(t *testing.T) []string {
	var out []string
	for _, c := range []string{"iptables-nft", "iptables-legacy"} {
		if _, err := exec.LookPath(c + "-restore"); err == nil {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Skip("skipping: no iptables-nft or iptables-legacy")
	}
	return out
}

var (
	npClient = podInfo{Namespace: "default", Name: "client", IPs: []netip.Addr{netip.MustParseAddr("10.99.1.2")},
		Labels: map[string]string{"role": "frontend"}, Local: true}
	npServer = podInfo{Namespace: "default", Name: "server", IPs: []netip.Addr{netip.MustParseAddr("10.99.2.2")},
		Labels: map[string]string{"app": "server"}, Local: true}
)

// TestRealIPTables applies rulesets to a real kernel (nft and legacy
// backends) and checks real TCP connections across FORWARD.
func TestRealIPTables(t *testing.T) {
	requireRoot(t)
	for _, cmd := range iptablesBackends(t) {
		t.Run(cmd, func(t *testing.T) { realIPTables(t, cmd) })
	}
}

func realIPTables(t *testing.T, cmd string) {
	tp := newTopo(t)
	tp.serve(t, 8080)
	tp.serve(t, 9090)
	be, err := newHost(cmd)
	if err != nil {
		t.Fatal(err)
	}
	n := newChainNames("NPT-")
	// The pod network's accept-all chain, jumped to first, as package network does.
	if err := be.Restore([]byte("*filter\n:NPT-FORWARD - [0:0]\n-A NPT-FORWARD -j ACCEPT\n-I FORWARD 1 -j NPT-FORWARD\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	s := &syncer{log: zaptest.NewLogger(t), be: be, n: n}
	apply := func(pols ...*networkingv1.NetworkPolicy) {
		t.Helper()
		snap := snapshot{Pods: []podInfo{npClient, npServer}, Namespaces: map[string]map[string]string{"default": {}}, Policies: pols}
		if err := s.apply(render(n, compile(snap, nil)), false); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(port int, want bool) {
		t.Helper()
		if got := tp.reach(port, want); got != want {
			t.Fatalf("client → server:%d reachable = %v, want %v\n%s", port, got, want, save(cmd))
		}
	}
	expect(8080, true)
	apply()
	expect(8080, true)
	apply(policy("default", "deny", &metav1.LabelSelector{}, nil))
	expect(8080, false)
	allow := policy("default", "fe", sel("app", "server"), func(s *networkingv1.NetworkPolicySpec) {
		s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{podPeer(sel("role", "frontend"))},
			Ports: []networkingv1.NetworkPolicyPort{tcp(8080)}}}
	})
	apply(policy("default", "deny", &metav1.LabelSelector{}, nil), allow)
	expect(8080, true)
	expect(9090, false)
	// Egress-only deny on the server: replies of allowed connections pass.
	apply(policy("default", "server-out", sel("app", "server"), func(s *networkingv1.NetworkPolicySpec) {
		s.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
	}))
	expect(8080, true)
	apply(policy("default", "client-out", sel("role", "frontend"), func(s *networkingv1.NetworkPolicySpec) {
		s.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
			{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.99.2.0/24"}}}}}}
	}))
	expect(8080, false)
	// policyTypes default to Ingress too: the client is isolated both ways;
	// the server's chains are gone.
	checkChains(t, be, n, n.Main, n.podChain(false, "default/client"), n.podChain(true, "default/client"))
	// Another component moving its jump in front of ours is undone.
	if err := be.Insert("FORWARD", 1, []string{"-j", "NPT-FORWARD"}); err != nil {
		t.Fatal(err)
	}
	expect(8080, true)
	if err := s.checkJump(); err != nil {
		t.Fatal(err)
	}
	expect(8080, false)
	apply()
	expect(8080, true)
	checkChains(t, be, n, n.Main)
	if err := cleanup(be, n); err != nil {
		t.Fatal(err)
	}
	checkChains(t, be, n)
	if lines, _ := be.Rules("FORWARD"); readJump(lines, n).copies != 0 {
		t.Fatalf("jump left after cleanup: %v", lines)
	}
}

func checkChains(t *testing.T, be backend, n chainNames, want ...string) {
	t.Helper()
	have, err := be.Chains()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range have {
		if n.owned(c) {
			got = append(got, c)
		}
	}
	if strings.Join(got, ",") != strings.Join(sortedCopy(want), ",") {
		t.Fatalf("owned chains %v, want %v", got, want)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func save(cmd string) string {
	out, _ := exec.Command(cmd+"-save", "-t", "filter").CombinedOutput()
	return string(out)
}
