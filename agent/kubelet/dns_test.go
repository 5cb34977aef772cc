package kubelet

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestResolvFilePolicies(t *testing.T) {
	dns := DNS{ClusterDNS: "10.43.0.10", ClusterDomain: "cluster.local"}
	host := []byte("nameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch example.com. . corp.example\noptions edns0 ndots:2\n")
	hostNet := func(p *corev1.Pod) { p.Spec.HostNetwork = true }
	policy := func(d corev1.DNSPolicy) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.DNSPolicy = d } }
	cfg := func(c corev1.PodDNSConfig) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.DNSConfig = &c } }
	const clusterSearch = "search default.svc.cluster.local svc.cluster.local cluster.local example.com corp.example\n"
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		dns  DNS
		want string
	}{
		{"cluster first (host search appended, dots trimmed)", testPod("a"), dns,
			clusterSearch + "nameserver 10.43.0.10\noptions ndots:5\n"},
		{"cluster first with host net on a host-network pod", testPod("a", hostNet, policy(corev1.DNSClusterFirstWithHostNet)), dns,
			clusterSearch + "nameserver 10.43.0.10\noptions ndots:5\n"},
		{"cluster first on a host-network pod is Default", testPod("a", hostNet), dns,
			"search example.com corp.example\nnameserver 192.0.2.53\nnameserver 192.0.2.54\noptions edns0 ndots:2\n"},
		{"no cluster DNS: Default", testPod("a"), DNS{ClusterDomain: "cluster.local"},
			"search example.com corp.example\nnameserver 192.0.2.53\nnameserver 192.0.2.54\noptions edns0 ndots:2\n"},
		{"none: only dnsConfig", testPod("a", policy(corev1.DNSNone), cfg(corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}})), dns,
			"nameserver 1.1.1.1\n"},
		{"dnsConfig merged", testPod("a", cfg(corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "10.43.0.10"}, Searches: []string{"x.y", "svc.cluster.local"},
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "single-request-reopen"}}})), dns,
			strings.TrimSuffix(clusterSearch, "\n") + " x.y\nnameserver 10.43.0.10\nnameserver 1.1.1.1\noptions ndots:2 single-request-reopen\n"},
		{"at most 3 nameservers", testPod("a", policy(corev1.DNSDefault), cfg(corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8"}})), dns,
			"search example.com corp.example\nnameserver 192.0.2.53\nnameserver 192.0.2.54\nnameserver 1.1.1.1\noptions edns0 ndots:2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(resolvFile(tc.pod, tc.dns, host)); got != tc.want {
				t.Errorf("resolv.conf:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestLimitSearches(t *testing.T) {
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("d%02d.example", i))
	}
	if got := limitSearches(many); len(got) != maxSearches {
		t.Errorf("%d searches kept, want %d", len(got), maxSearches)
	}
	long := []string{strings.Repeat("a", 1500), strings.Repeat("b", 600), "c"}
	if got := limitSearches(long); len(got) != 1 {
		t.Errorf("%d searches kept, want 1 (2048 characters at most)", len(got))
	}
}
