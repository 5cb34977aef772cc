package overlay

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// testNetns is a throwaway network namespace with an underlay veth
// (under0: 192.0.2.10/24, MTU 1500), removed in t.Cleanup.
func testNetns(t *testing.T) (name string, h *netlink.Handle) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: netlink tests need root")
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name = "ovt-" + hex.EncodeToString(b)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", name).Run() })
	ip("-n", name, "link", "add", "under0", "type", "veth", "peer", "name", "under1")
	ip("-n", name, "addr", "add", "192.0.2.10/24", "dev", "under0")
	ip("-n", name, "link", "set", "under1", "up")
	ip("-n", name, "link", "set", "under0", "up")
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Close() })
	if h, err = netlink.NewHandleAt(ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return name, h
}

func testDataplane(t *testing.T, h *netlink.Handle, backend string) *dataplane {
	p, err := Config{Backend: backend, NodeName: "self", NodeIP: net.ParseIP("192.0.2.10"), PodCIDR: "10.42.0.0/24",
		Client: fake.NewSimpleClientset(), Log: zaptest.NewLogger(t)}.parse()
	if err != nil {
		t.Fatal(err)
	}
	return &dataplane{h: h, cfg: p, log: p.Log}
}

// ipOut runs `ip -n ns args` and returns its output, lines sorted.
func ipOut(t *testing.T, ns string, args ...string) string {
	t.Helper()
	cmd := "ip"
	if args[0] == "fdb" {
		cmd = "bridge"
	}
	out, err := exec.Command(cmd, append([]string{"-n", ns}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", cmd, args, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func peersOf(t *testing.T, specs ...string) []Peer {
	var nodes []*corev1.Node
	for _, s := range specs { // name cidr ip mac
		f := strings.Fields(s)
		nodes = append(nodes, testNode(f[0], f[1], f[2], f[3]))
	}
	return PeersFromNodes("self", mustCIDR("10.42.0.0/24"), nodes)
}

func TestVXLANDataplane(t *testing.T) {
	ns, h := testNetns(t)
	d := testDataplane(t, h, BackendVXLAN)
	link, err := d.ensureVXLAN()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := link.(*netlink.Vxlan)
	if !ok || v.VxlanId != 1 || v.Port != 8472 || v.Learning || !v.SrcAddr.Equal(net.ParseIP("192.0.2.10")) || v.MTU != 1450 {
		t.Fatalf("device = %+v", link)
	}
	again, err := d.ensureVXLAN()
	if err != nil || again.Attrs().HardwareAddr.String() != link.Attrs().HardwareAddr.String() {
		t.Fatalf("second ensure: %v, MAC %v -> %v (want the same device)", err, link.Attrs().HardwareAddr, again.Attrs().HardwareAddr)
	}
	if got := ipOut(t, ns, "-4", "-o", "addr", "show", "dev", DefaultDevice); !strings.Contains(got, "inet 10.42.0.0/32") {
		t.Errorf("addresses: %s", got)
	}
	// A route orch did not program must survive.
	if out, err := exec.Command("ip", "-n", ns, "route", "add", "10.99.0.0/24", "via", "192.0.2.1").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	two := peersOf(t, "b 10.42.1.0/24 192.0.2.11 02:00:00:00:00:0b", "c 10.42.2.0/24 192.0.2.12 02:00:00:00:00:0c")
	for i := 0; i < 2; i++ { // idempotent
		if err := d.apply(link, DesiredVXLAN(two)); err != nil {
			t.Fatalf("apply #%d: %v", i, err)
		}
	}
	wantRoutes := "10.42.1.0/24 via 10.42.1.0 dev orch.1 onlink\n10.42.2.0/24 via 10.42.2.0 dev orch.1 onlink"
	if got := ipOut(t, ns, "route", "show", "proto", "111"); got != wantRoutes {
		t.Errorf("routes:\n%s\nwant:\n%s", got, wantRoutes)
	}
	if got := ipOut(t, ns, "neigh", "show", "dev", DefaultDevice); got != "10.42.1.0 lladdr 02:00:00:00:00:0b PERMANENT\n10.42.2.0 lladdr 02:00:00:00:00:0c PERMANENT" {
		t.Errorf("neighbours:\n%s", got)
	}
	if got := ipOut(t, ns, "fdb", "show", "dev", DefaultDevice); !strings.Contains(got, "02:00:00:00:00:0b dst 192.0.2.11 self permanent") ||
		!strings.Contains(got, "02:00:00:00:00:0c dst 192.0.2.12 self permanent") {
		t.Errorf("fdb:\n%s", got)
	}
	// c leaves, b's device is re-created with a new MAC.
	one := peersOf(t, "b 10.42.1.0/24 192.0.2.11 02:00:00:00:00:bb")
	if err := d.apply(link, DesiredVXLAN(one)); err != nil {
		t.Fatal(err)
	}
	if got := ipOut(t, ns, "route", "show", "proto", "111"); got != "10.42.1.0/24 via 10.42.1.0 dev orch.1 onlink" {
		t.Errorf("routes after c left:\n%s", got)
	}
	if got := ipOut(t, ns, "neigh", "show", "dev", DefaultDevice); got != "10.42.1.0 lladdr 02:00:00:00:00:bb PERMANENT" {
		t.Errorf("neighbours after c left:\n%s", got)
	}
	if got := ipOut(t, ns, "fdb", "show", "dev", DefaultDevice); strings.Contains(got, "192.0.2.12") || strings.Contains(got, ":0b dst") ||
		!strings.Contains(got, "02:00:00:00:00:bb dst 192.0.2.11") {
		t.Errorf("fdb after c left:\n%s", got)
	}
	if err := Teardown(h, ""); err != nil {
		t.Fatal(err)
	}
	if got := ipOut(t, ns, "-o", "link"); strings.Contains(got, DefaultDevice) {
		t.Errorf("device left after Teardown:\n%s", got)
	}
	if got := ipOut(t, ns, "route"); strings.Contains(got, "10.42.") || !strings.Contains(got, "10.99.0.0/24") {
		t.Errorf("routes after Teardown:\n%s", got)
	}
}

func TestHostGWDataplane(t *testing.T) {
	ns, h := testNetns(t)
	vx := testDataplane(t, h, BackendVXLAN)
	if _, err := vx.ensureVXLAN(); err != nil {
		t.Fatal(err)
	}
	d := testDataplane(t, h, BackendHostGW)
	if err := d.removeVXLAN(); err != nil { // a backend switch removes the device
		t.Fatal(err)
	}
	if got := ipOut(t, ns, "-o", "link"); strings.Contains(got, DefaultDevice) {
		t.Errorf("VXLAN device left after switching to host-gw:\n%s", got)
	}
	two := peersOf(t, "b 10.42.1.0/24 192.0.2.11 -", "c 10.42.2.0/24 192.0.2.12 -")
	for i := 0; i < 2; i++ {
		if err := d.apply(nil, DesiredHostGW(two)); err != nil {
			t.Fatalf("apply #%d: %v", i, err)
		}
	}
	want := "10.42.1.0/24 via 192.0.2.11 dev under0\n10.42.2.0/24 via 192.0.2.12 dev under0"
	if got := ipOut(t, ns, "route", "show", "proto", "111"); got != want {
		t.Errorf("routes:\n%s\nwant:\n%s", got, want)
	}
	// b moves to another node IP, c leaves.
	if err := d.apply(nil, DesiredHostGW(peersOf(t, "b 10.42.1.0/24 192.0.2.21 -"))); err != nil {
		t.Fatal(err)
	}
	if got := ipOut(t, ns, "route", "show", "proto", "111"); got != "10.42.1.0/24 via 192.0.2.21 dev under0" {
		t.Errorf("routes after update:\n%s", got)
	}
	if err := Teardown(h, ""); err != nil {
		t.Fatal(err)
	}
	if got := ipOut(t, ns, "route", "show", "proto", "111"); got != "" {
		t.Errorf("routes after Teardown:\n%s", got)
	}
}

func TestPodMTU(t *testing.T) {
	ns, h := testNetns(t)
	if out, err := exec.Command("ip", "-n", ns, "addr", "add", "10.254.0.1/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("ip addr add: %v\n%s", err, out)
	}
	for _, c := range []struct {
		backend, ip string
		want        int
	}{
		{BackendVXLAN, "192.0.2.10", 1450},
		{BackendHostGW, "192.0.2.10", 1500},
		{BackendHostGW, "10.254.0.1", 0}, // on lo: 65536 is too big for a veth
		{BackendVXLAN, "10.254.0.1", 0},
	} {
		got, err := podMTUAt(h, c.backend, net.ParseIP(c.ip))
		if err != nil || got != c.want {
			t.Errorf("%s on %s: got %d, %v; want %d", c.backend, c.ip, got, err, c.want)
		}
	}
}
