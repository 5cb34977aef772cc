package agent

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/orch/orch/agent/overlay"
)

func TestRouteConflict(t *testing.T) {
	cidr := func(s string) *net.IPNet {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	cfg := Config{DataDir: "/srv/b", ClusterCIDR: "10.42.0.0/16"}
	cfg.Defaults()
	for _, tc := range []struct {
		name   string
		routes []hostRoute
		pod    string
		link   string // named in the error; "" for none
	}{
		{"empty host", nil, "10.42.0.0/24", ""},
		{"default and broader routes", []hostRoute{{Dst: nil, Link: "eth0"}, {Dst: cidr("10.0.0.0/8"), Link: "tun0"},
			{Dst: cidr("192.168.1.0/24"), Link: "eth0", Kind: "device"}}, "10.42.0.0/24", ""},
		{"own bridge and VXLAN device", []hostRoute{{Dst: cidr("10.42.0.0/24"), Link: cfg.BridgeName, Kind: "bridge"},
			{Dst: cidr("10.42.1.0/24"), Link: cfg.VXLANDevice, Kind: "vxlan", Proto: overlay.RouteProtocol}}, "10.42.0.0/24", ""},
		{"own cluster's host-gw routes", []hostRoute{{Dst: cidr("10.42.1.0/24"), Link: "eth0", Kind: "device",
			Proto: overlay.RouteProtocol}}, "10.42.0.0/24", ""},
		{"another instance's bridge, same cluster CIDR", []hostRoute{{Dst: cidr("10.42.0.0/24"), Link: "orch0", Kind: "bridge"}},
			"10.42.5.0/24", "orch0"},
		{"another instance's VXLAN routes", []hostRoute{{Dst: cidr("10.42.7.0/24"), Link: "orch.1", Kind: "vxlan",
			Proto: overlay.RouteProtocol}}, "10.42.0.0/24", "orch.1"},
		{"pod subnet on another link, before the cluster CIDR is known", []hostRoute{{Dst: cidr("10.42.0.0/25"), Link: "docker0",
			Kind: "bridge"}}, "10.42.0.0/24", "docker0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := routeConflict(tc.routes, cfg, tc.pod)
			if tc.link == "" {
				if err != nil {
					t.Fatalf("unexpected conflict: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNetworkClash) || !strings.Contains(err.Error(), "link "+tc.link) ||
				!strings.Contains(err.Error(), "--cluster-cidr") {
				t.Fatalf("error %v, want a conflict naming link %s and --cluster-cidr", err, tc.link)
			}
		})
	}
	// Only the pod subnet: a cluster CIDR that does not parse is skipped.
	bad := cfg
	bad.ClusterCIDR = "nope"
	if err := routeConflict([]hostRoute{{Dst: cidr("10.42.0.0/24"), Link: "orch0", Kind: "bridge"}}, bad, "10.42.0.0/24"); err == nil {
		t.Error("pod subnet conflict not found")
	}
}

func TestVXLANConflict(t *testing.T) {
	vx := func(name string, vni, port int) netlink.Link {
		return &netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: name}, VxlanId: vni, Port: port}
	}
	ok := []netlink.Link{&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "orch0"}}, vx("mine.1", 1, 8472),
		vx("other", 2, 8472), vx("other2", 1, 4789)}
	if err := vxlanConflict(ok, "mine.1"); err != nil {
		t.Fatal(err)
	}
	err := vxlanConflict(append(ok, vx("orch.1", 1, 8472)), "mine.1")
	if !errors.Is(err, ErrNetworkClash) || !strings.Contains(err.Error(), "orch.1") || !strings.Contains(err.Error(), "host-gw") {
		t.Fatalf("error %v", err)
	}
}

func TestAddrConflict(t *testing.T) {
	addrs := []hostAddr{{IP: net.ParseIP("127.0.0.1"), Link: "lo"}, {IP: net.ParseIP("192.168.1.5"), Link: "eth0"},
		{IP: net.ParseIP("10.53.0.10"), Link: "orchb-dns"}, {IP: net.ParseIP("fe80::1"), Link: "eth0"}}
	for _, svc := range []string{"10.43.0.0/16", "10.53.0.0/24", "bad"} {
		if err := addrConflict(addrs, "orchb-dns", svc); err != nil {
			t.Errorf("%s: %v", svc, err)
		}
	}
	err := addrConflict(addrs, "orch-dns", "10.53.0.0/16")
	if !errors.Is(err, ErrNetworkClash) || !strings.Contains(err.Error(), "link orchb-dns") || !strings.Contains(err.Error(), "--service-cidr") {
		t.Fatalf("error %v", err)
	}
}
