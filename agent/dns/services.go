package dns

import (
	"net"
	"sort"
	"strings"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// endpoint is one ready address of a service with its DNS name label.
type endpoint struct {
	ip   net.IP
	host string // hostname, or the dashed IP
}

// port is a named port of a service (or of its endpoints when headless).
type port struct {
	name, proto string
	port        int32
}

func headless(svc *corev1.Service) bool { return svc.Spec.ClusterIP == corev1.ClusterIPNone }

func (z *Zone) svcFQDN(svc *corev1.Service) string {
	return svc.Name + "." + svc.Namespace + ".svc." + z.domain
}

// serviceRecords answers <svc>.<ns>.svc: its ClusterIPs, the ready
// endpoints of a headless service, a CNAME for ExternalName; SRV lists
// every port.
func (z *Zone) serviceRecords(q dns.Question, svc *corev1.Service) result {
	r := result{exists: true}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		if svc.Spec.ExternalName != "" {
			r.answer = []dns.RR{&dns.CNAME{Hdr: hdr(q.Name, dns.TypeCNAME), Target: dns.Fqdn(svc.Spec.ExternalName)}}
		}
		return r
	}
	if q.Qtype == dns.TypeSRV {
		r.answer, r.extra = z.srvAnswers(q, svc, func(port) bool { return true })
		return r
	}
	if headless(svc) {
		var ips []net.IP
		for _, ep := range z.readyEndpoints(svc) {
			ips = append(ips, ep.ip)
		}
		r.answer = addrRRs(q, ips)
		return r
	}
	r.answer = addrRRs(q, clusterIPs(svc))
	return r
}

// endpointRecords answers <host>.<svc>.<ns>.svc: the ready endpoints whose
// hostname (or dashed IP) is host.
func (z *Zone) endpointRecords(q dns.Question, svc *corev1.Service, host string) result {
	var ips []net.IP
	for _, ep := range z.readyEndpoints(svc) {
		if ep.host == host {
			ips = append(ips, ep.ip)
		}
	}
	if len(ips) == 0 {
		return result{}
	}
	return result{exists: true, answer: addrRRs(q, ips)}
}

// srvRecords answers _<port>._<proto>.<svc>.<ns>.svc.
func (z *Zone) srvRecords(q dns.Question, svc *corev1.Service, name, proto string) result {
	match := func(p port) bool { return p.name == name && p.proto == proto }
	found := false
	for _, p := range z.ports(svc) {
		found = found || match(p)
	}
	if !found {
		return result{}
	}
	r := result{exists: true}
	if q.Qtype == dns.TypeSRV || q.Qtype == dns.TypeANY {
		r.answer, r.extra = z.srvAnswers(q, svc, match)
	}
	return r
}

// srvAnswers are the SRV records of the matching ports, pointing at the
// service name, or at each ready endpoint when headless, with their
// addresses as additional records.
func (z *Zone) srvAnswers(q dns.Question, svc *corev1.Service, match func(port) bool) (answer, extra []dns.RR) {
	type target struct {
		name string
		ips  []net.IP
	}
	targets := []target{{name: z.svcFQDN(svc), ips: clusterIPs(svc)}}
	if headless(svc) {
		targets = nil
		for _, ep := range z.readyEndpoints(svc) {
			targets = append(targets, target{name: ep.host + "." + z.svcFQDN(svc), ips: []net.IP{ep.ip}})
		}
	}
	if len(targets) == 0 {
		return nil, nil
	}
	weight := uint16(max(1, 100/len(targets)))
	for _, p := range z.ports(svc) {
		if !match(p) {
			continue
		}
		for _, t := range targets {
			answer = append(answer, &dns.SRV{Hdr: hdr(q.Name, dns.TypeSRV), Priority: 0, Weight: weight,
				Port: uint16(p.port), Target: t.name})
		}
	}
	seen := map[string]bool{}
	for _, t := range targets {
		if !seen[t.name] {
			seen[t.name] = true
			extra = append(extra, addrRRs(dns.Question{Name: t.name, Qtype: dns.TypeANY}, t.ips)...)
		}
	}
	return answer, extra
}

// ports are the service's ports, or its endpoints' ports when headless
// (the numbers clients connect to).
func (z *Zone) ports(svc *corev1.Service) []port {
	var out []port
	if !headless(svc) {
		for _, p := range svc.Spec.Ports {
			out = append(out, port{name: p.Name, proto: protoName(p.Protocol), port: p.Port})
		}
		return out
	}
	seen := map[port]bool{}
	for _, s := range z.src.slicesOf(svc.Namespace, svc.Name) {
		for _, p := range s.Ports {
			if p.Port == nil {
				continue
			}
			pp := port{port: *p.Port, proto: "tcp"}
			if p.Name != nil {
				pp.name = *p.Name
			}
			if p.Protocol != nil {
				pp.proto = protoName(*p.Protocol)
			}
			if !seen[pp] {
				seen[pp] = true
				out = append(out, pp)
			}
		}
	}
	return out
}

func protoName(p corev1.Protocol) string {
	if p == "" {
		return "tcp"
	}
	return strings.ToLower(string(p))
}

// readyEndpoints are the ready addresses of svc's EndpointSlices, each once,
// sorted by address.
func (z *Zone) readyEndpoints(svc *corev1.Service) []endpoint {
	seen := map[string]bool{}
	var out []endpoint
	for _, s := range z.src.slicesOf(svc.Namespace, svc.Name) {
		if s.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				ip := net.ParseIP(a)
				if ip == nil || seen[ip.String()] {
					continue
				}
				seen[ip.String()] = true
				out = append(out, endpoint{ip: ip, host: endpointHost(ep, ip)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ip.String() < out[j].ip.String() })
	return out
}

func endpointHost(ep discoveryv1.Endpoint, ip net.IP) string {
	if ep.Hostname != nil && *ep.Hostname != "" {
		return strings.ToLower(*ep.Hostname)
	}
	return dashed(ip.String())
}
