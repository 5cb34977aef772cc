package pki

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
)

// Defaults used when Options leaves a field empty.
const (
	DefaultClusterDomain = "cluster.local"
	DefaultServiceCIDR   = "10.43.0.0/16"
)

// SANs is a set of subject alternative names: DNS names and IP addresses,
// kept sorted and free of duplicates so that two sets compare with Equal.
type SANs struct {
	DNSNames []string
	IPs      []net.IP
}

// Equal reports whether s and o hold the same names and addresses.
func (s SANs) Equal(o SANs) bool {
	return slices.Equal(s.DNSNames, o.DNSNames) && slices.Equal(ipStrings(s.IPs), ipStrings(o.IPs))
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}

// sanBuilder accumulates SANs without duplicates.
type sanBuilder struct {
	dns map[string]struct{}
	ips map[netip.Addr]struct{}
}

func newSANBuilder() *sanBuilder {
	return &sanBuilder{dns: map[string]struct{}{}, ips: map[netip.Addr]struct{}{}}
}

// add records v as an IP address when it parses as one, else as a DNS name.
func (b *sanBuilder) add(v string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return
	}
	if a, err := netip.ParseAddr(v); err == nil {
		b.addIP(a)
		return
	}
	b.dns[strings.ToLower(strings.TrimSuffix(v, "."))] = struct{}{}
}

func (b *sanBuilder) addIP(a netip.Addr) {
	b.ips[a.Unmap().WithZone("")] = struct{}{}
}

func (b *sanBuilder) build() SANs {
	var s SANs
	for d := range b.dns {
		s.DNSNames = append(s.DNSNames, d)
	}
	slices.Sort(s.DNSNames)
	addrs := make([]netip.Addr, 0, len(b.ips))
	for a := range b.ips {
		addrs = append(addrs, a)
	}
	slices.SortFunc(addrs, func(x, y netip.Addr) int { return x.Compare(y) })
	for _, a := range addrs {
		s.IPs = append(s.IPs, net.IP(a.AsSlice()))
	}
	return s
}

// sansOf returns the SAN set of an existing certificate in canonical form.
func sansOf(dns []string, ips []net.IP) SANs {
	b := newSANBuilder()
	for _, d := range dns {
		b.add(d)
	}
	for _, ip := range ips {
		if a, ok := netip.AddrFromSlice(ip); ok {
			b.addIP(a)
		}
	}
	return b.build()
}

// WantedSANs computes the names the serving and peer certificates must carry.
func WantedSANs(opts Options) (SANs, error) {
	b := newSANBuilder()
	host := opts.Hostname
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return SANs{}, fmt.Errorf("get hostname: %w", err)
		}
		host = h
	}
	for _, v := range []string{host, "localhost", "127.0.0.1", "::1", opts.AdvertiseAddress} {
		b.add(v)
	}
	for _, v := range opts.TLSSANs {
		b.add(v)
	}
	domain := opts.ClusterDomain
	if domain == "" {
		domain = DefaultClusterDomain
	}
	for _, v := range []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + domain} {
		b.add(v)
	}
	svcIP, err := firstServiceIP(opts.ServiceCIDR)
	if err != nil {
		return SANs{}, err
	}
	b.addIP(svcIP)
	if bind, err := netip.ParseAddr(opts.BindAddress); err == nil && !bind.IsUnspecified() {
		b.addIP(bind)
		return b.build(), nil
	}
	hostIPs, err := opts.hostIPs()
	if err != nil {
		return SANs{}, err
	}
	for _, ip := range hostIPs {
		if a, ok := netip.AddrFromSlice(ip); ok && usableHostIP(a) {
			b.addIP(a)
		}
	}
	return b.build(), nil
}

// usableHostIP filters out loopback, link-local and unspecified addresses:
// link-local addresses need a zone to be dialled and cannot appear in SANs.
func usableHostIP(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsUnspecified() && !a.IsMulticast()
}

// firstServiceIP returns the first host address of the service CIDR
// (10.43.0.1 for 10.43.0.0/16): the address of the `kubernetes` Service.
func firstServiceIP(cidr string) (netip.Addr, error) {
	if cidr == "" {
		cidr = DefaultServiceCIDR
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(cidr))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("parse service CIDR %q: %w", cidr, err)
	}
	first := p.Masked().Addr().Next()
	if !first.IsValid() || !p.Contains(first) {
		return netip.Addr{}, fmt.Errorf("service CIDR %q has no host addresses", cidr)
	}
	return first, nil
}

// interfaceIPs lists the addresses of all host interfaces.
func interfaceIPs() ([]net.IP, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list interface addresses: %w", err)
	}
	var out []net.IP
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, n.IP)
		}
	}
	return out, nil
}
