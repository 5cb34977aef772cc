package dns

import (
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// TTL is the time to live of every record, as CoreDNS's kubernetes plugin.
const TTL = 5

// Zone answers the names of the cluster domain and the reverse names of
// Service and endpoint IPs from a source.
type Zone struct {
	domain string // "cluster.local." (lower case, fully qualified)
	dnsIP  net.IP
	src    source
	serial uint32
}

// result is what a name holds for a query type.
type result struct {
	answer, extra []dns.RR
	exists        bool // false: NXDOMAIN
}

func newZone(domain string, dnsIP net.IP, src source) *Zone {
	return &Zone{domain: strings.ToLower(dns.Fqdn(domain)), dnsIP: dnsIP, src: src, serial: uint32(time.Now().Unix())}
}

// Answer returns the authoritative reply to req when its question is in the
// zone (or the reverse name of a known IP), and nil when it is to be
// forwarded.
func (z *Zone) Answer(req *dns.Msg) *dns.Msg {
	if len(req.Question) != 1 {
		return nil
	}
	q := req.Question[0]
	if q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY {
		return nil
	}
	name := strings.ToLower(dns.Fqdn(q.Name))
	if strings.HasSuffix(name, ".in-addr.arpa.") || strings.HasSuffix(name, ".ip6.arpa.") {
		res, ok := z.reverse(q, name)
		if !ok {
			return nil
		}
		return z.reply(req, res)
	}
	if !dns.IsSubDomain(z.domain, name) {
		return nil
	}
	return z.reply(req, z.lookup(q, name))
}

// lookup answers a name inside the zone.
func (z *Zone) lookup(q dns.Question, name string) result {
	rel := strings.TrimSuffix(strings.TrimSuffix(name, z.domain), ".")
	labels := dns.SplitDomainName(rel)
	n := len(labels)
	switch {
	case n == 0:
		return z.apex(q)
	case labels[n-1] == "svc":
		return z.svcNames(q, labels[:n-1])
	case labels[n-1] == "pod":
		return podNames(q, labels[:n-1])
	case n == 1 && labels[0] == "dns":
		return result{exists: true}
	case n == 2 && labels[0] == "ns" && labels[1] == "dns":
		return result{exists: true, answer: addrRRs(q, []net.IP{z.dnsIP})}
	}
	return result{}
}

func (z *Zone) apex(q dns.Question) result {
	r := result{exists: true}
	if q.Qtype == dns.TypeSOA || q.Qtype == dns.TypeANY {
		r.answer = append(r.answer, z.soa())
	}
	if q.Qtype == dns.TypeNS || q.Qtype == dns.TypeANY {
		ns := "ns.dns." + z.domain
		r.answer = append(r.answer, &dns.NS{Hdr: hdr(q.Name, dns.TypeNS), Ns: ns})
		r.extra = addrRRs(dns.Question{Name: ns, Qtype: dns.TypeA}, []net.IP{z.dnsIP})
	}
	return r
}

// svcNames answers <...>.svc.<domain>; parts are the labels before "svc".
func (z *Zone) svcNames(q dns.Question, parts []string) result {
	n := len(parts)
	switch {
	case n == 0:
		return result{exists: true}
	case n == 1:
		return result{exists: z.src.hasNamespace(parts[0])}
	case n > 4:
		return result{}
	}
	svc := z.src.service(parts[n-1], parts[n-2])
	if svc == nil {
		return result{}
	}
	switch {
	case n == 2:
		return z.serviceRecords(q, svc)
	case n == 3:
		return z.endpointRecords(q, svc, parts[0])
	case strings.HasPrefix(parts[0], "_") && strings.HasPrefix(parts[1], "_"):
		return z.srvRecords(q, svc, parts[0][1:], parts[1][1:])
	}
	return result{}
}

// podNames answers <a-b-c-d>.<ns>.pod.<domain> (any namespace, as CoreDNS's
// "pods insecure").
func podNames(q dns.Question, parts []string) result {
	switch len(parts) {
	case 0, 1:
		return result{exists: true}
	case 2:
		if ip := dashedIP(parts[0]); ip != nil {
			return result{exists: true, answer: addrRRs(q, []net.IP{ip})}
		}
	}
	return result{}
}

// dashedIP parses 10-42-0-5 or 2001-db8--1.
func dashedIP(s string) net.IP {
	if strings.Count(s, "-") == 3 {
		if ip := net.ParseIP(strings.ReplaceAll(s, "-", ".")); ip != nil && ip.To4() != nil {
			return ip.To4()
		}
	}
	if ip := net.ParseIP(strings.ReplaceAll(s, "-", ":")); ip != nil && ip.To4() == nil {
		return ip
	}
	return nil
}

// dashed is the endpoint name CoreDNS gives an address without hostname.
func dashed(ip string) string {
	return strings.NewReplacer(".", "-", ":", "-").Replace(ip)
}

func (z *Zone) soa() dns.RR {
	return &dns.SOA{Hdr: hdr(z.domain, dns.TypeSOA), Ns: "ns.dns." + z.domain, Mbox: "hostmaster." + z.domain,
		Serial: z.serial, Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: TTL}
}

// reply turns a result into the authoritative answer to req: NXDOMAIN for
// names that do not exist, and the SOA in the authority section whenever
// the answer is empty (negative caching).
func (z *Zone) reply(req *dns.Msg, r result) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	m.RecursionAvailable = true
	if !r.exists {
		m.Rcode = dns.RcodeNameError
	}
	m.Answer, m.Extra = r.answer, r.extra
	if len(m.Answer) == 0 {
		m.Ns = []dns.RR{z.soa()}
	}
	return m
}

func hdr(name string, t uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: TTL}
}

// addrRRs are the A (or AAAA) records of ips matching q's type; ANY gets both.
func addrRRs(q dns.Question, ips []net.IP) []dns.RR {
	var out []dns.RR
	for _, ip := range ips {
		v4 := ip.To4()
		switch {
		case v4 != nil && (q.Qtype == dns.TypeA || q.Qtype == dns.TypeANY):
			out = append(out, &dns.A{Hdr: hdr(q.Name, dns.TypeA), A: v4})
		case v4 == nil && (q.Qtype == dns.TypeAAAA || q.Qtype == dns.TypeANY):
			out = append(out, &dns.AAAA{Hdr: hdr(q.Name, dns.TypeAAAA), AAAA: ip})
		}
	}
	return out
}

// inZone says whether name is in the cluster domain.
func (z *Zone) inZone(name string) bool {
	return dns.IsSubDomain(z.domain, strings.ToLower(dns.Fqdn(name)))
}
