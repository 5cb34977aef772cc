package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
)

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: real iptables tests need root (network namespaces)")
	}
}

// backends lists the iptables variants installed here.
func backends(t testing.TB) []string {
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

// enterNetns moves the calling goroutine, locked to its thread, into a new
// anonymous network namespace (lo up, eth0 with addrs, default route via
// eth0) until the returned func is called; the namespace vanishes with
// it, so nothing is left on the host even if the test dies. Processes
// started from this goroutine (iptables) run inside it.
func enterNetns(t testing.TB, addrs ...string) func() {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("current netns: %v", err)
	}
	ns, err := netns.New()
	if err != nil {
		orig.Close()
		runtime.UnlockOSThread()
		t.Fatalf("new netns: %v", err)
	}
	leave := func() {
		ns.Close()
		if err := netns.Set(orig); err != nil {
			orig.Close()
			return // the thread stays locked and dies with the goroutine
		}
		orig.Close()
		runtime.UnlockOSThread()
	}
	if err := setupLinks(addrs); err != nil {
		leave()
		t.Fatal(err)
	}
	return leave
}

func setupLinks(addrs []string) error {
	lo, err := netlink.LinkByName("lo")
	if err == nil {
		err = netlink.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	// A veth pair (dummy links may be missing from the kernel).
	d := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0"}, PeerName: "eth1"}
	if err := netlink.LinkAdd(d); err != nil {
		return fmt.Errorf("veth: %w", err)
	}
	if peer, err := netlink.LinkByName("eth1"); err != nil || netlink.LinkSetUp(peer) != nil {
		return fmt.Errorf("veth peer up: %v", err)
	}
	for _, a := range addrs {
		ad, err := netlink.ParseAddr(a)
		if err == nil {
			err = netlink.AddrAdd(d, ad)
		}
		if err != nil {
			return fmt.Errorf("addr %s: %w", a, err)
		}
	}
	if err := netlink.LinkSetUp(d); err != nil {
		return err
	}
	return netlink.RouteAdd(&netlink.Route{LinkIndex: d.Attrs().Index, Scope: netlink.SCOPE_LINK,
		Dst: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}})
}

// backendServer answers every connection with its name.
func backendServer(t testing.TB, addr, name string) {
	t.Helper()
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, name+"\n")
			_ = c.Close()
		}
	}()
}

func ask(addr string) (string, error) {
	c, err := net.DialTimeout("tcp4", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	s, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(s), err
}

func save(t testing.TB, cmd string) string {
	t.Helper()
	out, err := exec.Command(cmd + "-save").Output()
	if err != nil {
		t.Fatalf("%s-save: %v", cmd, err)
	}
	return string(out)
}

// TestRealIPTables programs a real kernel (each backend, in a throwaway
// netns): ClusterIP spreads over both endpoints, NodePort on a local
// address and on localhost, REJECT without endpoints, stale chains gone
// after a delete, nothing left after cleanup.
func TestRealIPTables(t *testing.T) {
	requireRoot(t)
	for _, cmd := range backends(t) {
		t.Run(cmd, func(t *testing.T) { realIPTables(t, cmd) })
	}
}

func realIPTables(t *testing.T, cmd string) {
	leave := enterNetns(t, "192.0.2.10/24", "192.0.2.11/24")
	defer leave()
	backendServer(t, "192.0.2.10:8080", "a")
	backendServer(t, "192.0.2.11:8080", "b")
	be, err := newHost(cmd)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Prefix: "ORCHT-", ClusterCIDR: "10.244.0.0/16", MasqMark: 0x4000}
	s := newSyncer(zaptest.NewLogger(t), be, newGenerator(cfg, be.HasRandomFully()), nil)
	defer func() {
		if err := cleanup(be, s.gen.n); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if out := save(t, cmd); strings.Contains(out, "ORCHT-") {
			t.Errorf("left after cleanup:\n%s", out)
		}
	}()
	svc := testSvc("ns", "web", "10.43.200.1", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30080
	})
	if _, err := s.sync(ports("n", svc, testSlice("ns", "web", "x", 8080, ready("192.0.2.10", "192.0.2.11")...)), false); err != nil {
		t.Fatal(err)
	}
	// A full resync finds every jump in the saved tables (so it makes no
	// go-iptables call) and adds no copy.
	if _, err := s.sync(ports("n", svc, testSlice("ns", "web", "x", 8080, ready("192.0.2.10", "192.0.2.11")...)), true); err != nil {
		t.Fatal(err)
	}
	for _, table := range tableOrder {
		out, err := be.Save(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range s.gen.n.jumps() {
			if j.table == table && strings.Count(string(out), j.line()+"\n") != 1 {
				t.Errorf("jump %q is not in %s-save exactly once:\n%s", j.line(), cmd, out)
			}
		}
	}
	seen := map[string]int{}
	for range 30 {
		got, err := ask("10.43.200.1:80")
		if err != nil {
			t.Fatalf("ClusterIP: %v\n%s", err, save(t, cmd))
		}
		seen[got]++
	}
	if seen["a"] == 0 || seen["b"] == 0 {
		t.Errorf("ClusterIP reached %v, want both endpoints", seen)
	}
	for _, addr := range []string{"192.0.2.10:30080", "127.0.0.1:30080"} {
		if got, err := ask(addr); err != nil || (got != "a" && got != "b") {
			t.Errorf("NodePort %s: %q %v", addr, got, err)
		}
	}
	// ClientIP affinity: every request lands on the same endpoint;
	// an externalIP answers too.
	sticky := testSvc("ns", "web", "10.43.200.1", func(s *corev1.Service) {
		s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		s.Spec.ExternalIPs = []string{"198.51.100.7"}
	})
	if _, err := s.sync(ports("n", sticky, testSlice("ns", "web", "x", 8080, ready("192.0.2.10", "192.0.2.11")...)), false); err != nil {
		t.Fatal(err)
	}
	first, err := ask("10.43.200.1:80")
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if got, err := ask("10.43.200.1:80"); err != nil || got != first {
			t.Fatalf("with ClientIP affinity got %q (%v) after %q", got, err, first)
		}
	}
	if got, err := ask("198.51.100.7:80"); err != nil || (got != "a" && got != "b") {
		t.Errorf("externalIP: %q %v", got, err)
	}
	// No endpoints: REJECT (connection refused, not a timeout).
	if _, err := s.sync(ports("n", svc, testSlice("ns", "web", "x", 8080)), false); err != nil {
		t.Fatal(err)
	}
	if _, err := ask("10.43.200.1:80"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("without endpoints: %v, want connection refused", err)
	}
	// Deleted: only the fixed chains stay.
	if _, err := s.sync(nil, false); err != nil {
		t.Fatal(err)
	}
	for _, kind := range serviceKinds {
		if out := save(t, cmd); strings.Contains(out, ":ORCHT-"+kind) {
			t.Errorf("stale %s chains after delete:\n%s", kind, out)
		}
	}
}
