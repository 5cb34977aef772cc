package netpol

import (
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func pod(ns, name, ip string, local bool, lbls map[string]string, ports ...corev1.ContainerPort) podInfo {
	return podInfo{Namespace: ns, Name: name, IPs: []netip.Addr{netip.MustParseAddr(ip)}, Labels: lbls, Ports: ports, Local: local}
}

func sel(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func policy(ns, name string, podSel *metav1.LabelSelector, mut func(*networkingv1.NetworkPolicySpec)) *networkingv1.NetworkPolicy {
	p := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: *podSel}}
	if mut != nil {
		mut(&p.Spec)
	}
	return p
}

func tcp(port int) networkingv1.NetworkPolicyPort {
	v := intstr.FromInt32(int32(port))
	return networkingv1.NetworkPolicyPort{Port: &v}
}

func namedPort(name string, proto corev1.Protocol) networkingv1.NetworkPolicyPort {
	v := intstr.FromString(name)
	return networkingv1.NetworkPolicyPort{Port: &v, Protocol: &proto}
}

func podPeer(s *metav1.LabelSelector) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{PodSelector: s}
}

// cluster: server (local, web), frontend (local), other (remote), and a
// pod in namespace "prod".
var (
	web      = corev1.ContainerPort{Name: "web", ContainerPort: 8080}
	dns      = corev1.ContainerPort{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}
	server   = pod("default", "server", "10.42.0.10", true, map[string]string{"app": "server"}, web)
	frontend = pod("default", "frontend", "10.42.0.11", true, map[string]string{"role": "frontend"})
	other    = pod("default", "other", "10.42.1.12", false, map[string]string{"role": "other"})
	prodDB   = pod("prod", "db", "10.42.1.13", false, map[string]string{"role": "frontend"}, dns)
)

func snap(pols ...*networkingv1.NetworkPolicy) snapshot {
	return snapshot{Pods: []podInfo{frontend, other, server, prodDB}, // sorted by key
		Namespaces: map[string]map[string]string{"default": {}, "prod": {"env": "prod"}}, Policies: pols}
}

func TestCompile(t *testing.T) {
	all := &metav1.LabelSelector{}
	serverSel := sel("app", "server")
	tests := []struct {
		name string
		pols []*networkingv1.NetworkPolicy
		want []podRules
	}{
		{"no policy: all open", nil, nil},
		{"default deny ingress", []*networkingv1.NetworkPolicy{policy("default", "deny", all, nil)},
			[]podRules{{Pod: frontend, InIsolated: true}, {Pod: server, InIsolated: true}}},
		{"policy in another namespace selects nothing here", []*networkingv1.NetworkPolicy{policy("prod", "deny", all, nil)}, nil},
		{"allow frontend on 80", []*networkingv1.NetworkPolicy{policy("default", "fe", serverSel, func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{podPeer(sel("role", "frontend"))},
				Ports: []networkingv1.NetworkPolicyPort{tcp(80)}}}
		})}, []podRules{{Pod: server, InIsolated: true, Ingress: []allow{{"10.42.0.11/32", "tcp", "80", "default/fe"}}}}},
		{"empty from and ports: all", []*networkingv1.NetworkPolicy{policy("default", "open", serverSel, func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{}}
		})}, []podRules{{Pod: server, InIsolated: true, Ingress: []allow{{Policy: "default/open"}}}}},
		{"namespaceSelector alone", []*networkingv1.NetworkPolicy{policy("default", "ns", serverSel, func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("env", "prod")}}}}
		})}, []podRules{{Pod: server, InIsolated: true, Ingress: []allow{{Peer: "10.42.1.13/32", Policy: "default/ns"}}}}},
		{"namespace by metadata.name label and pod selector", []*networkingv1.NetworkPolicy{policy("default", "both", serverSel, func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
				{NamespaceSelector: sel(nsNameLabel, "prod"), PodSelector: sel("role", "frontend")}}}}
		})}, []podRules{{Pod: server, InIsolated: true, Ingress: []allow{{Peer: "10.42.1.13/32", Policy: "default/both"}}}}},
		{"ipBlock with except and port range", []*networkingv1.NetworkPolicy{policy("default", "ib", serverSel, func(s *networkingv1.NetworkPolicySpec) {
			p := tcp(8000)
			end := int32(8100)
			p.EndPort = &end
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
				{IPBlock: &networkingv1.IPBlock{CIDR: "192.168.0.0/24", Except: []string{"192.168.0.0/25"}}}}, Ports: []networkingv1.NetworkPolicyPort{p}}}
		})}, []podRules{{Pod: server, InIsolated: true, Ingress: []allow{{"192.168.0.128/25", "tcp", "8000:8100", "default/ib"}}}}},
		{"named ingress port resolved on the pod", []*networkingv1.NetworkPolicy{policy("default", "named", all, func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{namedPort("web", corev1.ProtocolTCP)}}}
		})}, []podRules{{Pod: frontend, InIsolated: true}, // no port "web": nothing allowed
			{Pod: server, InIsolated: true, Ingress: []allow{{"", "tcp", "8080", "default/named"}}}}},
		{"union of two policies, duplicates dropped", []*networkingv1.NetworkPolicy{
			policy("default", "a", serverSel, func(s *networkingv1.NetworkPolicySpec) {
				s.Ingress = []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{tcp(80)}}}
			}),
			policy("default", "b", serverSel, func(s *networkingv1.NetworkPolicySpec) {
				s.Ingress = []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{tcp(80), {Protocol: ptr(corev1.ProtocolUDP)}}}}
			})}, []podRules{{Pod: server, InIsolated: true, Ingress: []allow{{"", "tcp", "80", "default/a"}, {"", "udp", "", "default/b"}}}}},
		{"egress isolates by default only with egress rules", []*networkingv1.NetworkPolicy{
			policy("default", "eg", sel("role", "frontend"), func(s *networkingv1.NetworkPolicySpec) {
				s.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
					{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.42.0.10/32"}}}}}}
			})}, []podRules{{Pod: frontend, InIsolated: true, OutIsolated: true, Egress: cidrAllows(t, "0.0.0.0/0", "10.42.0.10/32", "default/eg")}}},
		{"egress-only default deny", []*networkingv1.NetworkPolicy{policy("default", "deny-out", sel("role", "frontend"), func(s *networkingv1.NetworkPolicySpec) {
			s.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
		})}, []podRules{{Pod: frontend, OutIsolated: true}}},
		{"named egress port resolved per destination pod", []*networkingv1.NetworkPolicy{policy("default", "dns", sel("role", "frontend"), func(s *networkingv1.NetworkPolicySpec) {
			s.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
			s.Egress = []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{namedPort("dns", corev1.ProtocolUDP), tcp(443)}}}
		})}, []podRules{{Pod: frontend, OutIsolated: true, Egress: []allow{{"", "tcp", "443", "default/dns"}, {"10.42.1.13/32", "udp", "53", "default/dns"}}}}},
		{"bad selector selects nothing", []*networkingv1.NetworkPolicy{policy("default", "bad", &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}, nil)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := compile(snap(tc.pols...), nil)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("compile =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func cidrAllows(t *testing.T, block, except, policy string) []allow {
	ps, _ := subtractCIDRs(block, []string{except})
	var out []allow
	for _, p := range ps {
		out = append(out, allow{Peer: p.String(), Policy: policy})
	}
	if len(out) != 32 {
		t.Fatalf("0.0.0.0/0 minus a /32 should be 32 prefixes, got %d", len(out))
	}
	return out
}
