package proxy

import (
	"net"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// conntracker deletes UDP conntrack entries (UDP has no connection end, so
// entries to an endpoint that went away would blackhole a client's flow).
type conntracker interface {
	// DeleteUDP deletes UDP entries whose original destination is dst (and
	// dport when non-zero) and whose reply comes from src (when non-empty).
	DeleteUDP(dst string, dport int32, src string) error
}

// netlinkConntrack is the real conntracker.
type netlinkConntrack struct{}

var _ conntracker = netlinkConntrack{}

func (netlinkConntrack) DeleteUDP(dst string, dport int32, src string) error {
	f := &netlink.ConntrackFilter{}
	if err := f.AddProtocol(unix.IPPROTO_UDP); err != nil {
		return err
	}
	if dst != "" {
		if err := f.AddIP(netlink.ConntrackOrigDstIP, net.ParseIP(dst)); err != nil {
			return err
		}
	}
	if dport != 0 {
		if err := f.AddPort(netlink.ConntrackOrigDstPort, uint16(dport)); err != nil {
			return err
		}
	}
	if src != "" {
		if err := f.AddIP(netlink.ConntrackReplySrcIP, net.ParseIP(src)); err != nil {
			return err
		}
	}
	_, err := netlink.ConntrackDeleteFilters(netlink.ConntrackTable, unix.AF_INET, f)
	return err
}

// udpPort is what the last sync programmed for a UDP service port.
type udpPort struct {
	addrs     []string // ClusterIP, externalIPs, LB IPs
	port      int32
	nodePort  int32
	endpoints map[string]bool // endpoint IPs
}

func udpState(sp *servicePort) udpPort {
	u := udpPort{port: sp.port, nodePort: sp.nodePort, endpoints: map[string]bool{}}
	u.addrs = append(append(append(u.addrs, sp.clusterIP), sp.externalIP...), sp.lbIPs...)
	cluster, local := categorize(sp)
	for _, e := range append(cluster, local...) {
		u.endpoints[e.ip] = true
	}
	return u
}

// flushStaleUDP deletes conntrack entries of UDP service ports towards
// endpoints that were removed, and entries of ports that had no endpoints
// (their packets were rejected and left entries that would keep new
// endpoints from being used), as kube-proxy does.
func (s *syncer) flushStaleUDP(ports []*servicePort) {
	next := map[string]udpPort{}
	for _, sp := range ports {
		if sp.proto != "udp" {
			continue
		}
		key := sp.name + "/udp"
		now := udpState(sp)
		next[key] = now
		old, had := s.udp[key]
		if !had {
			continue
		}
		if len(old.endpoints) == 0 && len(now.endpoints) > 0 {
			s.deleteUDP(now, "")
		}
		for ip := range old.endpoints {
			if !now.endpoints[ip] {
				s.deleteUDP(old, ip)
			}
		}
	}
	s.udp = next
}

func (s *syncer) deleteUDP(u udpPort, endpointIP string) {
	if s.ct == nil {
		return
	}
	for _, a := range u.addrs {
		if err := s.ct.DeleteUDP(a, u.port, endpointIP); err != nil {
			s.log.Debug("deleting UDP conntrack entries", zap.String("dst", a), zap.Error(err))
		}
	}
	if u.nodePort != 0 {
		if err := s.ct.DeleteUDP("", u.nodePort, endpointIP); err != nil {
			s.log.Debug("deleting UDP conntrack entries", zap.Int32("nodePort", u.nodePort), zap.Error(err))
		}
	}
}
