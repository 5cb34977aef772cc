package netpol

import (
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
)

// podAddr is one address of a peer pod.
type podAddr struct {
	pod podInfo
	ip  netip.Addr
}

// peerSet is what a rule's from/to list resolves to.
type peerSet struct {
	any   bool           // empty list: every address
	cidrs []netip.Prefix // ipBlocks (minus except) and peer pods' /32s
	dests []podAddr      // the pods among them, for named egress ports
}

// peers resolves a rule's peers; withDests fills dests (egress named ports).
func (c *compiler) peers(pol *networkingv1.NetworkPolicy, list []networkingv1.NetworkPolicyPeer, withDests bool) peerSet {
	if len(list) == 0 {
		ps := peerSet{any: true}
		if withDests {
			ps.dests = c.podAddrs(func(podInfo, netip.Addr) bool { return true })
		}
		return ps
	}
	var ps peerSet
	for _, peer := range list {
		switch {
		case peer.IPBlock != nil:
			block, ok := subtractCIDRs(peer.IPBlock.CIDR, peer.IPBlock.Except)
			if !ok {
				c.warnf(pol, "ipBlock cidr "+peer.IPBlock.CIDR+" does not parse")
				continue
			}
			ps.cidrs = append(ps.cidrs, block...)
			if withDests {
				ps.dests = append(ps.dests, c.podAddrs(func(_ podInfo, ip netip.Addr) bool { return inAny(ip, block) })...)
			}
		case peer.PodSelector != nil || peer.NamespaceSelector != nil:
			addrs := c.podAddrs(func(p podInfo, _ netip.Addr) bool { return c.peerMatches(pol, peer, p) })
			for _, a := range addrs {
				ps.cidrs = append(ps.cidrs, netip.PrefixFrom(a.ip, 32))
			}
			if withDests {
				ps.dests = append(ps.dests, addrs...)
			}
		}
	}
	return ps
}

// peerMatches: podSelector alone selects in the policy's namespace,
// namespaceSelector alone every pod of the selected namespaces, both the
// selected pods of the selected namespaces.
func (c *compiler) peerMatches(pol *networkingv1.NetworkPolicy, peer networkingv1.NetworkPolicyPeer, p podInfo) bool {
	if peer.NamespaceSelector == nil {
		if p.Namespace != pol.Namespace {
			return false
		}
	} else if !c.selects(pol, peer.NamespaceSelector, c.s.nsLabels(p.Namespace)) {
		return false
	}
	return peer.PodSelector == nil || c.selects(pol, peer.PodSelector, p.Labels)
}

func (c *compiler) podAddrs(keep func(podInfo, netip.Addr) bool) []podAddr {
	var out []podAddr
	for _, p := range c.s.Pods {
		for _, ip := range p.IPs {
			if keep(p, ip) {
				out = append(out, podAddr{pod: p, ip: ip})
			}
		}
	}
	return out
}

func (c *compiler) warnf(pol *networkingv1.NetworkPolicy, msg string) {
	if c.warn != nil {
		c.warn("network policy "+pol.Namespace+"/"+pol.Name+": "+msg, nil)
	}
}

// peerStrings is the CIDR list of a peer set ("" = any address).
func (ps peerSet) peerStrings() []string {
	if ps.any {
		return []string{""}
	}
	return prefixStrings(ps.cidrs)
}

// ingressRule: sources are the peers; named ports are the local pod's.
func (c *compiler) ingressRule(pol *networkingv1.NetworkPolicy, name string, dst podInfo, r networkingv1.NetworkPolicyIngressRule) []allow {
	ps := c.peers(pol, r.From, false)
	numeric, named, all := rulePorts(r.Ports)
	numeric = append(numeric, resolveNamed(named, dst)...)
	if !all && len(numeric) == 0 {
		return nil
	}
	return cross(ps.peerStrings(), numeric, all, name)
}

// egressRule: destinations are the peers; named ports are resolved per
// destination pod (addresses that are no pod match no named port).
func (c *compiler) egressRule(pol *networkingv1.NetworkPolicy, name string, r networkingv1.NetworkPolicyEgressRule) []allow {
	numeric, named, all := rulePorts(r.Ports)
	ps := c.peers(pol, r.To, len(named) > 0)
	out := []allow{}
	if all || len(numeric) > 0 {
		out = cross(ps.peerStrings(), numeric, all, name)
	}
	for _, d := range ps.dests {
		out = append(out, cross([]string{netip.PrefixFrom(d.ip, 32).String()}, resolveNamed(named, d.pod), false, name)...)
	}
	return out
}
