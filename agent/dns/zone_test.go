package dns

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestZoneAnswers(t *testing.T) {
	c, _ := startCache(t, fixtures()...)
	z := newZone("cluster.local", net.ParseIP("10.43.0.10"), c)
	for _, tc := range []struct {
		name   string
		qtype  uint16
		rcode  int
		answer []string
		extra  []string
	}{
		{"kubernetes.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"A 10.43.0.1"}, nil},
		{"KUBERNETES.Default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"A 10.43.0.1"}, nil},
		{"kubernetes.default.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, nil, nil},
		{"web.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"A 10.43.5.5"}, nil},
		{"web.default.svc.cluster.local.", dns.TypeTXT, dns.RcodeSuccess, nil, nil},
		{"nope.default.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, nil, nil},
		{"web.nons.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, nil, nil},
		{"kubernetes.default.svc.cluster.local.default.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, nil, nil},
		{"example.com.default.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, nil, nil},
		{"nothing.cluster.local.", dns.TypeA, dns.RcodeNameError, nil, nil},
		{"default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, nil, nil},
		{"svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, nil, nil},
		{"cluster.local.", dns.TypeSOA, dns.RcodeSuccess, []string{"SOA ns.dns.cluster.local. hostmaster.cluster.local."}, nil},
		{"cluster.local.", dns.TypeNS, dns.RcodeSuccess, []string{"NS ns.dns.cluster.local."}, []string{"A 10.43.0.10"}},
		{"ns.dns.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"A 10.43.0.10"}, nil},
		// headless: ready endpoints of every slice, once each
		{"db.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"A 10.42.0.5", "A 10.42.0.6", "A 10.42.1.8"}, nil},
		{"db-0.db.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"A 10.42.0.5"}, nil},
		{"db-2.db.default.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, nil, nil}, // not ready
		{"10-42-1-8.db.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"A 10.42.1.8"}, nil},
		{"10-42-0-9.web.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"A 10.42.0.9"}, nil},
		{"empty.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, nil, nil},
		// SRV
		{"_http._tcp.web.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess,
			[]string{"SRV 0 100 80 web.default.svc.cluster.local."}, []string{"A 10.43.5.5"}},
		{"_dns._udp.web.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess,
			[]string{"SRV 0 100 53 web.default.svc.cluster.local."}, []string{"A 10.43.5.5"}},
		{"_dns._tcp.web.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeNameError, nil, nil},
		{"_http._tcp.web.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, nil, nil},
		{"_pg._tcp.db.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, []string{
			"SRV 0 33 5432 db-0.db.default.svc.cluster.local.", "SRV 0 33 5432 db-1.db.default.svc.cluster.local.",
			"SRV 0 33 5432 10-42-1-8.db.default.svc.cluster.local."},
			[]string{"A 10.42.0.5", "A 10.42.0.6", "A 10.42.1.8"}},
		{"web.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, []string{
			"SRV 0 100 80 web.default.svc.cluster.local.", "SRV 0 100 53 web.default.svc.cluster.local.",
			"SRV 0 100 8080 web.default.svc.cluster.local."}, []string{"A 10.43.5.5"}},
		// ExternalName, IPv6, pods
		{"ext.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"CNAME example.org."}, nil},
		{"six.v6.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"AAAA fd00::5"}, nil},
		{"six.v6.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, nil, nil},
		{"10-42-0-33.default.pod.cluster.local.", dns.TypeA, dns.RcodeSuccess, []string{"A 10.42.0.33"}, nil},
		{"fd00--7.any.pod.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"AAAA fd00::7"}, nil},
		{"not-an-ip.default.pod.cluster.local.", dns.TypeA, dns.RcodeNameError, nil, nil},
		// reverse
		{"1.0.43.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, []string{"PTR kubernetes.default.svc.cluster.local."}, nil},
		{"5.0.42.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, []string{"PTR db-0.db.default.svc.cluster.local."}, nil},
		{"8.1.42.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, []string{"PTR 10-42-1-8.db.default.svc.cluster.local."}, nil},
		{"5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.", dns.TypePTR, dns.RcodeSuccess,
			[]string{"PTR six.v6.svc.cluster.local."}, nil},
	} {
		t.Run(dns.TypeToString[tc.qtype]+" "+tc.name, func(t *testing.T) {
			m := z.Answer(query(tc.name, tc.qtype))
			if m == nil {
				t.Fatal("not answered by the zone")
			}
			if m.Rcode != tc.rcode || !m.Authoritative {
				t.Errorf("rcode %s (aa %v), want %s", dns.RcodeToString[m.Rcode], m.Authoritative, dns.RcodeToString[tc.rcode])
			}
			got := rrs(m.Answer)
			if tc.qtype == dns.TypeSOA {
				got = soaPrefix(got)
			}
			if !slices.Equal(got, tc.answer) {
				t.Errorf("answer %q, want %q", got, tc.answer)
			}
			if got := rrs(m.Extra); !slices.Equal(got, tc.extra) {
				t.Errorf("extra %q, want %q", got, tc.extra)
			}
			if len(m.Answer) == 0 && (len(m.Ns) != 1 || m.Ns[0].Header().Rrtype != dns.TypeSOA) {
				t.Errorf("an empty answer needs the SOA in authority, got %v", m.Ns)
			}
		})
	}
}

func soaPrefix(in []string) []string {
	var out []string
	for _, s := range in {
		out = append(out, strings.Join(strings.Fields(s)[:3], " "))
	}
	return out
}

func TestZoneLeavesOtherNames(t *testing.T) {
	c, _ := startCache(t, fixtures()...)
	z := newZone("cluster.local.", net.ParseIP("10.43.0.10"), c)
	for _, name := range []string{"example.org.", "local.", "cluster.local.example.org.", "9.9.9.9.in-addr.arpa.", "x.in-addr.arpa."} {
		if m := z.Answer(query(name, dns.TypeA)); m != nil {
			t.Errorf("%s answered by the zone: %v", name, m)
		}
	}
}

func TestDashedIP(t *testing.T) {
	for in, want := range map[string]string{"10-1-2-3": "10.1.2.3", "fd00--1": "fd00::1", "1-2-3": "", "a-b-c-d": "", "10-1-2-300": ""} {
		got := dashedIP(in)
		if (want == "" && got != nil) || (want != "" && !got.Equal(net.ParseIP(want))) {
			t.Errorf("dashedIP(%q) = %v, want %q", in, got, want)
		}
	}
}
