package dns

import (
	"net"
	"strings"

	"github.com/miekg/dns"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// reverse answers the PTR of a Service ClusterIP (its name) or a ready
// endpoint address (<host>.<svc>.<ns>.svc); ok is false for other
// addresses, which are forwarded.
func (z *Zone) reverse(q dns.Question, name string) (result, bool) {
	ip := reverseIP(name)
	if ip == nil {
		return result{}, false
	}
	var targets []string
	for _, svc := range z.src.servicesByIP(ip.String()) {
		targets = append(targets, z.svcFQDN(svc))
	}
	for _, s := range z.src.slicesByIP(ip.String()) {
		svc := z.src.service(s.Namespace, s.Labels[discoveryv1.LabelServiceName])
		if svc == nil {
			continue
		}
		for _, ep := range z.readyEndpoints(svc) {
			if ep.ip.Equal(ip) {
				targets = append(targets, ep.host+"."+z.svcFQDN(svc))
			}
		}
	}
	if len(targets) == 0 {
		return result{}, false
	}
	r := result{exists: true}
	if q.Qtype != dns.TypePTR && q.Qtype != dns.TypeANY {
		return r, true
	}
	seen := map[string]bool{}
	for _, t := range targets {
		if !seen[t] {
			seen[t] = true
			r.answer = append(r.answer, &dns.PTR{Hdr: hdr(q.Name, dns.TypePTR), Ptr: t})
		}
	}
	return r, true
}

// reverseIP parses 5.0.42.10.in-addr.arpa. or a full nibble ip6.arpa name.
func reverseIP(name string) net.IP {
	if rest, ok := strings.CutSuffix(name, ".in-addr.arpa."); ok {
		l := strings.Split(rest, ".")
		if len(l) != 4 {
			return nil
		}
		return net.ParseIP(l[3] + "." + l[2] + "." + l[1] + "." + l[0]).To4()
	}
	rest, ok := strings.CutSuffix(name, ".ip6.arpa.")
	if !ok {
		return nil
	}
	l := strings.Split(rest, ".")
	if len(l) != 32 {
		return nil
	}
	var b strings.Builder
	for i := 31; i >= 0; i-- {
		if len(l[i]) != 1 {
			return nil
		}
		b.WriteString(l[i])
		if i%4 == 0 && i > 0 {
			b.WriteByte(':')
		}
	}
	return net.ParseIP(b.String())
}
