package proxy

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
)

// With prefix KUBE- the chain names are kube-proxy's own (its unit tests'
// values for ns1/svc1:p80).
func TestChainNamesMatchKubeProxy(t *testing.T) {
	n := newChainNames("KUBE-")
	if got := n.servicePortChain(kindSVC, "ns1/svc1:p80", "tcp"); got != "KUBE-SVC-XPGD46QRK7WJZT7O" {
		t.Errorf("SVC chain = %s", got)
	}
	if got := n.endpointChain("ns1/svc1:p80", "tcp", "10.180.0.1:80"); got != "KUBE-SEP-SXIVWICOYRO3J4NJ" {
		t.Errorf("SEP chain = %s", got)
	}
	long := newChainNames("ORCHT0A1B2C-")
	for _, c := range []string{long.servicePortChain(kindSVC, "a/b:c", "tcp"), long.External, long.Firewall} {
		if len(c) > maxChainName {
			t.Errorf("%s is longer than %d", c, maxChainName)
		}
	}
	if !long.owned(tableNAT, long.servicePortChain(kindSEP, "a/b", "udp")) || long.owned(tableNAT, "ORCHT0A1B2C-POSTROUTING") ||
		long.owned(tableNAT, "ORCHT0A1B2C-HP-0123456789") || !long.owned(tableFilter, long.Forward) {
		t.Error("owned() is wrong")
	}
}

func render(t *testing.T, node string, svc *corev1.Service, sl ...*discoveryv1.EndpointSlice) ruleset {
	t.Helper()
	g := newGenerator(Config{Prefix: "KUBE-", ClusterCIDR: "10.0.0.0/8", MasqMark: 0x4000}, true)
	return g.render(servicePorts(svc, sl, node))
}

func TestRenderClusterIP(t *testing.T) {
	r := render(t, "node0", testSvc("ns1", "svc1", "172.30.0.41"),
		testSlice("ns1", "svc1", "a", 80, ready("10.180.0.1", "10.180.0.2", "10.180.0.3")...))
	svc := "KUBE-SVC-XPGD46QRK7WJZT7O"
	wantServices := []string{
		`-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j ` + svc,
		`-A KUBE-SERVICES -m comment --comment "orch service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`,
	}
	assertLines(t, r[tableNAT]["KUBE-SERVICES"], wantServices)
	sep1 := newChainNames("KUBE-").endpointChain("ns1/svc1:p80", "tcp", "10.180.0.1:80")
	got := r[tableNAT][svc]
	assertLines(t, got[:2], []string{
		`-A ` + svc + ` -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ`,
		`-A ` + svc + ` -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.3333333333 -j ` + sep1,
	})
	if !strings.Contains(got[2], "--probability 0.5000000000") || strings.Contains(got[3], "probability") {
		t.Errorf("probabilities: %q", got[2:])
	}
	assertLines(t, r[tableNAT][sep1], []string{
		`-A ` + sep1 + ` -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ`,
		`-A ` + sep1 + ` -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80`,
	})
	if n := len(r[tableFilter]["KUBE-SERVICES"]); n != 0 {
		t.Errorf("filter SERVICES has %d rules, want none", n)
	}
}

func assertLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("rules differ\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// grep returns the rules of table (all chains) containing every part.
func grep(r ruleset, table string, parts ...string) []string {
	var out []string
	for _, c := range r.chains(table) {
		for _, l := range r[table][c] {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l, p)
			}
			if ok {
				out = append(out, l)
			}
		}
	}
	return out
}

func TestRenderCases(t *testing.T) {
	nodePort := func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort; s.Spec.Ports[0].NodePort = 30080 }
	local := func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal }
	cases := []struct {
		name     string
		svc      *corev1.Service
		eps      []testEP
		table    string
		want     [][]string // each: parts that one rule must hold
		wantNone [][]string // parts no rule may hold
	}{
		{name: "no endpoints: REJECT", svc: testSvc("ns", "s", "10.43.0.5", nodePort), table: tableFilter,
			want: [][]string{{"-A KUBE-SERVICES", `"ns/s:p80 has no endpoints"`, "-d 10.43.0.5 --dport 80", "-j REJECT --reject-with icmp-port-unreachable"},
				{"-A KUBE-EXTERNAL-SVC", "--dst-type LOCAL", "--dport 30080", "-j REJECT"}}},
		{name: "nodeport masquerades", svc: testSvc("ns", "s", "10.43.0.5", nodePort), eps: ready("10.1.0.2"), table: tableNAT,
			want: [][]string{{"-A KUBE-NODEPORTS", "--comment ns/s:p80", "-m tcp -p tcp --dport 30080", "-j KUBE-EXT-"},
				{"-A KUBE-EXT-", "masquerade traffic for ns/s:p80 external destinations", "-j KUBE-MARK-MASQ"},
				{"-A KUBE-EXT-", "-j KUBE-SVC-"}}},
		{name: "eTP Local without local endpoints drops", svc: testSvc("ns", "s", "10.43.0.5", nodePort, local),
			eps: []testEP{{ip: "10.1.0.2", node: "other", ready: true}}, table: tableFilter,
			want:     [][]string{{"-A KUBE-EXTERNAL-SVC", `"ns/s:p80 has no local endpoints"`, "--dport 30080", "-j DROP"}},
			wantNone: [][]string{{"REJECT"}}},
		{name: "eTP Local keeps the source", svc: testSvc("ns", "s", "10.43.0.5", nodePort, local),
			eps: []testEP{{ip: "10.1.0.2", node: "me", ready: true}, {ip: "10.1.0.3", node: "other", ready: true}}, table: tableNAT,
			want: [][]string{{"-A KUBE-EXT-", "-s 10.0.0.0/8", "pod traffic for ns/s:p80", "-j KUBE-SVC-"},
				{"-A KUBE-EXT-", "--src-type LOCAL", "-j KUBE-MARK-MASQ"}, {"-A KUBE-EXT-", "-j KUBE-SVL-"},
				{"-A KUBE-SVL-", "ns/s:p80 -> 10.1.0.2:8080", "-j KUBE-SEP-"}},
			wantNone: [][]string{{"-A KUBE-SVL-", "10.1.0.3"}, {"masquerade traffic for"}}},
		{name: "iTP Local", svc: testSvc("ns", "s", "10.43.0.5", func(s *corev1.Service) {
			s.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
		}), eps: []testEP{{ip: "10.1.0.2", node: "me", ready: true}, {ip: "10.1.0.3", node: "other", ready: true}}, table: tableNAT,
			want:     [][]string{{"-A KUBE-SERVICES", "cluster IP", "-j KUBE-SVL-"}},
			wantNone: [][]string{{"-A KUBE-SVC-"}, {"10.1.0.3"}}},
		{name: "affinity", svc: testSvc("ns", "s", "10.43.0.5", func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		}), eps: ready("10.1.0.2", "10.1.0.3"), table: tableNAT,
			want: [][]string{{"-A KUBE-SVC-", "-m recent --name KUBE-SEP-", "--rcheck --seconds 10800 --reap -j KUBE-SEP-"},
				{"-A KUBE-SEP-", "-m recent --name KUBE-SEP-", "--set -m tcp -p tcp -j DNAT --to-destination 10.1.0.2:8080"}}},
		{name: "terminating fallback", svc: testSvc("ns", "s", "10.43.0.5"),
			eps: []testEP{{ip: "10.1.0.2", node: "me", term: true}, {ip: "10.1.0.3", node: "me"}}, table: tableNAT,
			want: [][]string{{"-A KUBE-SVC-", "-> 10.1.0.2:8080"}}, wantNone: [][]string{{"10.1.0.3"}}},
		{name: "not ready ignored", svc: testSvc("ns", "s", "10.43.0.5"),
			eps: []testEP{{ip: "10.1.0.2", node: "me", ready: true}, {ip: "10.1.0.3", node: "me"}}, table: tableNAT,
			wantNone: [][]string{{"10.1.0.3"}, {"probability"}}},
		{name: "externalIPs and LB with source ranges", svc: testSvc("ns", "s", "10.43.0.5", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.Ports[0].NodePort = 30080
			s.Spec.ExternalIPs = []string{"192.0.2.7"}
			s.Spec.LoadBalancerSourceRanges = []string{"198.51.100.0/24"}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.9"}}
		}), eps: ready("10.1.0.2"), table: tableNAT,
			want: [][]string{{"-A KUBE-SERVICES", `"ns/s:p80 external IP"`, "-d 192.0.2.7 --dport 80", "-j KUBE-EXT-"},
				{"-A KUBE-SERVICES", `"ns/s:p80 loadbalancer IP"`, "-d 192.0.2.9 --dport 80", "-j KUBE-FW-"},
				{"-A KUBE-FW-", "-s 198.51.100.0/24", "-j KUBE-EXT-"}}},
		{name: "LB source ranges drop in filter", svc: testSvc("ns", "s", "10.43.0.5", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.LoadBalancerSourceRanges = []string{"198.51.100.0/24"}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.9"}}
		}), eps: ready("10.1.0.2"), table: tableFilter,
			want: [][]string{{"-A KUBE-PROXY-FIREWALL", "traffic not accepted by KUBE-FW-", "-d 192.0.2.9 --dport 80 -j DROP"}}},
		{name: "headless skipped", svc: testSvc("ns", "s", "None"), eps: ready("10.1.0.2"), table: tableNAT,
			wantNone: [][]string{{"ns/s"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, "me", tc.svc, testSlice("ns", "s", "a", 8080, tc.eps...))
			for _, parts := range tc.want {
				if len(grep(r, tc.table, parts...)) == 0 {
					t.Errorf("no %s rule with %q; rules:\n%s", tc.table, parts, dump(r, tc.table))
				}
			}
			for _, parts := range tc.wantNone {
				if got := grep(r, tc.table, parts...); len(got) > 0 {
					t.Errorf("unexpected %s rules with %q: %q", tc.table, parts, got)
				}
			}
		})
	}
}

func dump(r ruleset, table string) string {
	var b strings.Builder
	for _, c := range r.chains(table) {
		for _, l := range r[table][c] {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
