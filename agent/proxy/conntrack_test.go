package proxy

import (
	"net"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// TestRealUDPConntrackFlush: a UDP flow to a ClusterIP is DNATed to an
// endpoint; when that endpoint goes away, its conntrack entry is deleted
// (else the client's next datagrams would keep going to the dead endpoint).
func TestRealUDPConntrackFlush(t *testing.T) {
	requireRoot(t)
	cmd := backends(t)[0]
	leave := enterNetns(t, "192.0.2.10/24", "192.0.2.11/24")
	defer leave()
	be, err := newHost(cmd)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Prefix: "ORCHT-", ClusterCIDR: "10.244.0.0/16", MasqMark: 0x4000}
	s := newSyncer(zaptest.NewLogger(t), be, newGenerator(cfg, be.HasRandomFully()), netlinkConntrack{})
	defer func() {
		if err := cleanup(be, s.gen.n); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	svc := testSvc("ns", "dns", "10.43.200.2", func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolUDP })
	slice := func(ips ...string) *discoveryv1.EndpointSlice {
		sl := testSlice("ns", "dns", "x", 5353, ready(ips...)...)
		p := corev1.ProtocolUDP
		sl.Ports[0].Protocol = &p
		return sl
	}
	if _, err := s.sync(ports("n", svc, slice("192.0.2.10")), false); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("udp4", "10.43.200.2:80")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if n := udpFlows(t, "10.43.200.2", "192.0.2.10"); n != 1 {
		t.Fatalf("%d conntrack entries to the endpoint, want 1", n)
	}
	if _, err := s.sync(ports("n", svc, slice("192.0.2.11")), false); err != nil {
		t.Fatal(err)
	}
	if n := udpFlows(t, "10.43.200.2", "192.0.2.10"); n != 0 {
		t.Errorf("%d conntrack entries to the removed endpoint left", n)
	}
}

// udpFlows counts UDP entries whose original destination is dst and whose
// reply comes from src.
func udpFlows(t *testing.T, dst, src string) int {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	flows, err := netlink.ConntrackTableList(netlink.ConntrackTable, unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range flows {
		if f.Forward.Protocol == unix.IPPROTO_UDP && f.Forward.DstIP.String() == dst && f.Reverse.SrcIP.String() == src {
			n++
		}
	}
	return n
}
