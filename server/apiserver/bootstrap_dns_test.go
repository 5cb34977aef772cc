package apiserver

import (
	"context"
	"net"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/server/registry"
)

func TestBootstrapDNSService(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dns    net.IP
		wantIP string
	}{
		{"default: the 10th address of the service CIDR", nil, "10.43.0.10"},
		{"--cluster-dns", net.ParseIP("10.43.200.53"), "10.43.200.53"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, store := newMetaTestServer(t, func(c *Config) { c.ClusterDNS = tc.dns })
			if err := s.Bootstrap(ctx); err != nil {
				t.Fatal(err)
			}
			var svc corev1.Service
			metaGetStored(t, s, "", "services", "kube-system", "kube-dns", &svc)
			if svc.Spec.ClusterIP != tc.wantIP || len(svc.Spec.Ports) != 2 || svc.Labels["k8s-app"] != "kube-dns" ||
				svc.Labels["service.kubernetes.io/service-proxy-name"] == "" || svc.Spec.Selector != nil {
				t.Errorf("kube-dns = %+v", svc)
			}
			for i, want := range []corev1.ServicePort{{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}, {Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53}} {
				if p := svc.Spec.Ports[i]; p.Name != want.Name || p.Protocol != want.Protocol || p.Port != 53 || p.TargetPort.IntValue() != 53 {
					t.Errorf("port %d = %+v, want %+v", i, p, want)
				}
			}
			if _, err := store.Get(ctx, registry.ServiceIPsPrefix+tc.wantIP); err != nil {
				t.Errorf("ClusterIP %s not reserved: %v", tc.wantIP, err)
			}
			rev := store.Revision()
			if err := s.Bootstrap(ctx); err != nil || store.Revision() != rev {
				t.Errorf("second Bootstrap: err %v, revision %d -> %d", err, rev, store.Revision())
			}
		})
	}
}

// TestBootstrapDNSIPTaken: a Service already holding the cluster DNS IP
// does not block bootstrap.
func TestBootstrapDNSIPTaken(t *testing.T) {
	ctx := context.Background()
	s, store := newMetaTestServer(t, nil)
	if _, err := store.Create(ctx, registry.ServiceIPsPrefix+"10.43.0.10", []byte("default/squatter")); err != nil {
		t.Fatal(err)
	}
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatalf("Bootstrap failed on a taken DNS IP: %v", err)
	}
	res := findResource(s.cfg.Resources, "", "services")
	if _, err := store.Get(ctx, res.Key("kube-system", "kube-dns")); err == nil {
		t.Error("kube-dns created on a taken IP")
	}
}
