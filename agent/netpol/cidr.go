package netpol

import (
	"net/netip"
	"slices"
)

// subtractCIDRs returns block minus the except prefixes as disjoint IPv4
// prefixes, sorted. An IPv6 block gives nothing (the pod network is IPv4);
// excepts outside block are ignored. ok is false when block does not parse.
func subtractCIDRs(block string, except []string) (out []netip.Prefix, ok bool) {
	b, err := netip.ParsePrefix(block)
	if err != nil {
		return nil, false
	}
	b = b.Masked()
	if !b.Addr().Is4() {
		return nil, true
	}
	out = []netip.Prefix{b}
	for _, e := range except {
		ep, err := netip.ParsePrefix(e)
		if err != nil || !ep.Addr().Is4() {
			continue
		}
		out = subtractOne(out, ep.Masked())
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return out, true
}

// subtractOne removes e from every prefix of set.
func subtractOne(set []netip.Prefix, e netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range set {
		switch {
		case e.Bits() <= p.Bits() && e.Contains(p.Addr()): // e covers p
		case p.Bits() < e.Bits() && p.Contains(e.Addr()): // p holds e: split
			out = append(out, split(p, e)...)
		default: // disjoint
			out = append(out, p)
		}
	}
	return out
}

// split returns p minus e (e strictly inside p): at every bit from p's
// length to e's, the half that does not hold e.
func split(p, e netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for bits := p.Bits() + 1; bits <= e.Bits(); bits++ {
		inner := netip.PrefixFrom(e.Addr(), bits).Masked()
		out = append(out, sibling(inner))
	}
	return out
}

// sibling is the other half of p's parent prefix.
func sibling(p netip.Prefix) netip.Prefix {
	a := p.Addr().As4()
	bit := p.Bits() - 1
	a[bit/8] ^= 0x80 >> (bit % 8)
	return netip.PrefixFrom(netip.AddrFrom4(a), p.Bits())
}

// inAny reports whether ip is in one of the prefixes.
func inAny(ip netip.Addr, set []netip.Prefix) bool {
	for _, p := range set {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
