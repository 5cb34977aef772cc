package overlay

import (
	"net"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Peer is another node as the overlay sees it.
type Peer struct {
	Name    string
	PodNet  *net.IPNet
	NodeIP  net.IP
	MAC     net.HardwareAddr // VXLAN device MAC; nil when not published
	Backend string           // the peer's published backend ("" unknown)
}

// Route is podCIDR via Gw (on the VXLAN device when OnLink).
type Route struct {
	Dst    *net.IPNet
	Gw     net.IP
	OnLink bool
}

// FDBEntry sends frames for MAC to the VXLAN endpoint Dst.
type FDBEntry struct {
	MAC net.HardwareAddr
	Dst net.IP
}

// NeighEntry is a permanent ARP entry IP -> MAC on the VXLAN device.
type NeighEntry struct {
	IP  net.IP
	MAC net.HardwareAddr
}

// Desired is what the host must hold for a set of peers.
type Desired struct {
	Routes []Route
	FDB    []FDBEntry
	Neighs []NeighEntry
}

// PeersFromNodes turns the Node list into peers: every node but self with
// a parseable IPv4 podCIDR and InternalIP. A node whose podCIDR overlaps
// the local one (a stale or conflicting allocation) is left out, so the
// node's own pods never get routed elsewhere. Sorted by name.
func PeersFromNodes(self string, own *net.IPNet, nodes []*corev1.Node) []Peer {
	var out []Peer
	for _, n := range nodes {
		if n == nil || n.Name == self || n.DeletionTimestamp != nil {
			continue
		}
		p, ok := peerFromNode(n)
		if !ok || (own != nil && overlaps(own, p.PodNet)) {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func peerFromNode(n *corev1.Node) (Peer, bool) {
	cidr := n.Spec.PodCIDR
	if cidr == "" && len(n.Spec.PodCIDRs) > 0 {
		cidr = n.Spec.PodCIDRs[0]
	}
	_, podNet, err := net.ParseCIDR(cidr)
	if err != nil || podNet.IP.To4() == nil {
		return Peer{}, false
	}
	var ip net.IP
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			if ip = net.ParseIP(a.Address).To4(); ip != nil {
				break
			}
		}
	}
	if ip == nil {
		return Peer{}, false
	}
	p := Peer{Name: n.Name, PodNet: podNet, NodeIP: ip, Backend: n.Annotations[AnnotationBackend]}
	if mac, err := net.ParseMAC(n.Annotations[AnnotationVXLANMAC]); err == nil && len(mac) == 6 {
		p.MAC = mac
	}
	return p, true
}

func overlaps(a, b *net.IPNet) bool { return a.Contains(b.IP) || b.Contains(a.IP) }

// gatewayOf is a podCIDR's .0 address: the peer's VXLAN device address.
func gatewayOf(n *net.IPNet) net.IP { return n.IP.Mask(n.Mask).To4() }

// DesiredVXLAN is the FDB, neighbour and route per peer that published its
// device MAC; a peer without one cannot be reached yet and is skipped.
func DesiredVXLAN(peers []Peer) Desired {
	var d Desired
	for _, p := range peers {
		if p.MAC == nil {
			continue
		}
		gw := gatewayOf(p.PodNet)
		d.FDB = append(d.FDB, FDBEntry{MAC: p.MAC, Dst: p.NodeIP})
		d.Neighs = append(d.Neighs, NeighEntry{IP: gw, MAC: p.MAC})
		d.Routes = append(d.Routes, Route{Dst: p.PodNet, Gw: gw, OnLink: true})
	}
	return d
}

// DesiredHostGW is a route podCIDR via the peer's node IP per peer.
func DesiredHostGW(peers []Peer) Desired {
	var d Desired
	for _, p := range peers {
		d.Routes = append(d.Routes, Route{Dst: p.PodNet, Gw: p.NodeIP})
	}
	return d
}
