package agent

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap"

	"github.com/orch/orch/agent/dns"
	"github.com/orch/orch/agent/overlay"
)

// ErrNetworkClash is returned when this node's network settings clash
// with another network on the host: another link routes part of the pod
// network, holds an address of the service CIDR, or another VXLAN device
// holds orch's VNI. Typically a second orch instance started with the
// first one's settings.
var ErrNetworkClash = errors.New("network settings clash with this host")

// CheckHost checks, before anything is started, that the pod network of an
// agent with cfg does not clash with another on the host: no other link
// routes part of its --cluster-cidr, and no other VXLAN device holds its
// VNI and port. `orch server` calls it so that a second instance sharing
// the first one's network settings fails at start, not later.
//
// serviceCIDR is the cluster's --service-cidr ("": not checked): no
// address on another link than this agent's DNS link may lie in it (the
// other instance's cluster DNS address, say), or the two instances' Service
// rules would catch each other's ClusterIPs.
func CheckHost(cfg Config, serviceCIDR string) error {
	cfg.Defaults()
	ip, err := nodeIP(cfg)
	if err != nil {
		return err
	}
	if err := checkHostNetwork(cfg, ip, ""); err != nil {
		return err
	}
	if serviceCIDR == "" {
		return nil
	}
	addrs, err := listAddrs()
	if err != nil {
		return fmt.Errorf("checking the service CIDR against the host's addresses: %w", err)
	}
	return addrConflict(addrs, dns.LinkName(cfg.BridgeName), serviceCIDR)
}

// hostAddr is one address of a host interface.
type hostAddr struct {
	IP   net.IP
	Link string
}

// addrConflict fails when an address of a link other than own lies in
// serviceCIDR.
func addrConflict(addrs []hostAddr, own, serviceCIDR string) error {
	_, svc, err := net.ParseCIDR(serviceCIDR)
	if err != nil {
		return nil // validated by the server
	}
	for _, a := range addrs {
		if a.Link != own && svc.Contains(a.IP) {
			return fmt.Errorf("%w: --service-cidr %s holds the address %s of link %s (another orch instance's cluster DNS?): "+
				"run this instance with its own --service-cidr and --cluster-dns (and --cluster-cidr)", ErrNetworkClash, serviceCIDR, a.IP, a.Link)
		}
	}
	return nil
}

func listAddrs() ([]hostAddr, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	var out []hostAddr
	for _, l := range links {
		addrs, err := netlink.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			continue // the link went away
		}
		for _, a := range addrs {
			out = append(out, hostAddr{IP: a.IP, Link: l.Attrs().Name})
		}
	}
	return out, nil
}

// checkHostNetwork is CheckHost with the node's pod subnet once known.
func checkHostNetwork(cfg Config, ip net.IP, podCIDR string) error {
	if err := checkRouteConflicts(cfg, podCIDR); err != nil {
		return err
	}
	backend, _ := overlay.ParseBackend(cfg.NetworkBackend)
	if backend != overlay.BackendVXLAN || ip.IsLoopback() {
		return nil // no VXLAN device (see overlay.Start)
	}
	links, err := netlink.LinkList()
	if err != nil {
		return fmt.Errorf("checking VXLAN devices: list links: %w", err)
	}
	return vxlanConflict(links, cfg.VXLANDevice)
}

// vxlanConflict fails when a VXLAN device other than own uses orch's VNI
// and port: the kernel would refuse to create own.
func vxlanConflict(links []netlink.Link, own string) error {
	for _, l := range links {
		v, ok := l.(*netlink.Vxlan)
		if !ok || v.Attrs().Name == own || v.VxlanId != overlay.DefaultVNI || v.Port != overlay.DefaultPort {
			continue
		}
		return fmt.Errorf("%w: the VXLAN device %s already uses VNI %d on UDP port %d (another orch instance?): "+
			"run this instance with --network-backend host-gw (or on a loopback --node-ip/--advertise-address)",
			ErrNetworkClash, v.Attrs().Name, overlay.DefaultVNI, overlay.DefaultPort)
	}
	return nil
}

// hostRoute is one IPv4 route of the main table, as the checks need it.
type hostRoute struct {
	Dst   *net.IPNet
	Link  string // interface name
	Kind  string // interface type (bridge, vxlan, ...)
	Proto int
}

// checkRouteConflicts fails when the host already routes part of this
// node's pod subnet or of the cluster CIDR over a link that is not this
// agent's bridge or VXLAN device: two instances with the same pod network
// would take each other's routes. Routes broader than the network (a
// default route, a 10.0.0.0/8 VPN route) do not conflict: the kernel
// prefers the more specific routes orch adds.
func checkRouteConflicts(cfg Config, podCIDR string) error {
	routes, err := listRoutes()
	if err != nil {
		return fmt.Errorf("checking the pod network against the host's routes: %w", err)
	}
	return routeConflict(routes, cfg, podCIDR)
}

func routeConflict(routes []hostRoute, cfg Config, podCIDR string) error {
	own := map[string]bool{cfg.BridgeName: true, cfg.VXLANDevice: true}
	for _, c := range []struct{ flag, cidr string }{{"pod subnet", podCIDR}, {"--cluster-cidr", cfg.ClusterCIDR}} {
		_, netw, err := net.ParseCIDR(c.cidr)
		if err != nil {
			continue // validated elsewhere
		}
		for _, r := range routes {
			if r.Dst == nil || own[r.Link] || !within(r.Dst, netw) {
				continue
			}
			// host-gw routes of this cluster: via the underlay, orch's protocol.
			if r.Proto == overlay.RouteProtocol && r.Kind != "vxlan" && r.Kind != "bridge" {
				continue
			}
			return fmt.Errorf("%w: %s %s overlaps the route %s on link %s (another orch instance or network on this host?): "+
				"run this instance with its own --cluster-cidr and --service-cidr (and --cluster-dns), or remove the link",
				ErrNetworkClash, c.flag, c.cidr, r.Dst, r.Link)
		}
	}
	return nil
}

// within tells whether sub lies inside netw (equal or more specific).
func within(sub, netw *net.IPNet) bool {
	subOnes, subBits := sub.Mask.Size()
	ones, bits := netw.Mask.Size()
	return subBits == bits && subOnes >= ones && netw.Contains(sub.IP)
}

func listRoutes() ([]hostRoute, error) {
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	byIndex := map[int]netlink.Link{}
	for _, l := range links {
		byIndex[l.Attrs().Index] = l
	}
	out := make([]hostRoute, 0, len(routes))
	for _, r := range routes {
		hr := hostRoute{Dst: r.Dst, Proto: int(r.Protocol), Link: fmt.Sprintf("#%d", r.LinkIndex)}
		if l, ok := byIndex[r.LinkIndex]; ok {
			hr.Link, hr.Kind = l.Attrs().Name, l.Type()
		}
		out = append(out, hr)
	}
	return out, nil
}

// warnDNSConflict logs when another link already holds the cluster DNS IP
// (another instance with the same --service-cidr/--cluster-dns): both would
// answer it. Only a warning: test agents beside each other share it.
func warnDNSConflict(cfg Config, log *zap.Logger) {
	ip := net.ParseIP(cfg.ClusterDNS)
	if ip == nil {
		return
	}
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return
	}
	own := dns.LinkName(cfg.BridgeName)
	for _, a := range addrs {
		if !a.IP.Equal(ip) {
			continue
		}
		if l, err := netlink.LinkByIndex(a.LinkIndex); err == nil && l.Attrs().Name != own {
			log.Warn("the cluster DNS IP is already on another link (another orch instance?): give this instance its own --service-cidr and --cluster-dns",
				zap.String("clusterDNS", cfg.ClusterDNS), zap.String("link", l.Attrs().Name))
			return
		}
	}
}
