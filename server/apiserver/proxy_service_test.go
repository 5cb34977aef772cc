package apiserver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPickEndpoint: only ready addresses of the subset serving the named
// port, and only those the filter accepts, are picked.
func TestPickEndpoint(t *testing.T) {
	eps := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{
		{NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.0.0.9"}}, Ports: []corev1.EndpointPort{{Name: "web", Port: 80}}},
		{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}}, Ports: []corev1.EndpointPort{{Name: "web", Port: 8080}, {Name: "tls", Port: 8443}}},
	}}
	only2 := func(a corev1.EndpointAddress) bool { return a.IP == "10.0.0.2" }
	all := func(corev1.EndpointAddress) bool { return true }
	for range 20 {
		if ip, p, ok := pickEndpoint(eps, "tls", only2); !ok || ip != "10.0.0.2" || p != 8443 {
			t.Fatalf("tls: %s %d %v", ip, p, ok)
		}
		if ip, p, ok := pickEndpoint(eps, "web", all); !ok || ip == "10.0.0.9" || p != 8080 {
			t.Fatalf("web: %s %d %v", ip, p, ok)
		}
	}
	if _, _, ok := pickEndpoint(eps, "other", all); ok {
		t.Fatal("a port no subset serves was picked")
	}
	if _, _, ok := pickEndpoint(eps, "web", func(corev1.EndpointAddress) bool { return false }); ok {
		t.Fatal("an address the filter rejects was picked")
	}
	if _, _, ok := pickEndpoint(&corev1.Endpoints{}, "", all); ok {
		t.Fatal("no subsets, yet picked")
	}
}
