package dns

import (
	"context"
	"strings"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakeclient "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func svc(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ip, Ports: ports}}
	if ip != "" {
		s.Spec.ClusterIPs = []string{ip}
	}
	return s
}

func svcPort(name string, proto corev1.Protocol, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: proto, Port: port}
}

type ep struct {
	ip, host string
	ready    bool
}

func slice(ns, svcName, name string, addrType discoveryv1.AddressType, ports []discoveryv1.EndpointPort, eps ...ep) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: svcName}}, AddressType: addrType, Ports: ports}
	for _, e := range eps {
		d := discoveryv1.Endpoint{Addresses: []string{e.ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(e.ready)}}
		if e.host != "" {
			d.Hostname = ptr.To(e.host)
		}
		s.Endpoints = append(s.Endpoints, d)
	}
	return s
}

func slicePort(name string, proto corev1.Protocol, port int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: ptr.To(name), Protocol: ptr.To(proto), Port: ptr.To(port)}
}

// fixtures is a small cluster: a ClusterIP service, a headless one with a
// StatefulSet-like slice, an ExternalName and an IPv6 service.
func fixtures() []runtime.Object {
	ext := svc("default", "ext", "")
	ext.Spec.Type, ext.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.org"
	six := svc("v6", "six", "fd00::5", svcPort("http", corev1.ProtocolTCP, 80))
	return []runtime.Object{
		svc("default", "kubernetes", "10.43.0.1", svcPort("https", corev1.ProtocolTCP, 443)),
		svc("default", "web", "10.43.5.5", svcPort("http", corev1.ProtocolTCP, 80), svcPort("dns", corev1.ProtocolUDP, 53), svcPort("", corev1.ProtocolTCP, 8080)),
		slice("default", "web", "web-a", discoveryv1.AddressTypeIPv4, []discoveryv1.EndpointPort{slicePort("http", corev1.ProtocolTCP, 8000)},
			ep{ip: "10.42.0.9", ready: true}),
		svc("default", "db", corev1.ClusterIPNone),
		slice("default", "db", "db-a", discoveryv1.AddressTypeIPv4, []discoveryv1.EndpointPort{slicePort("pg", corev1.ProtocolTCP, 5432)},
			ep{"10.42.0.6", "db-1", true}, ep{"10.42.0.5", "db-0", true}, ep{"10.42.0.7", "db-2", false}),
		slice("default", "db", "db-b", discoveryv1.AddressTypeIPv4, []discoveryv1.EndpointPort{slicePort("pg", corev1.ProtocolTCP, 5432)},
			ep{ip: "10.42.1.8", ready: true}, ep{"10.42.0.5", "db-0", true}),
		svc("default", "empty", corev1.ClusterIPNone),
		ext, six,
	}
}

type fakeClient = fakeclient.Clientset

func fakeCluster(t *testing.T) *fakeClient {
	t.Helper()
	return fakeclient.NewClientset(fixtures()...)
}

// startCache runs a Cache over a fake clientset holding objs.
func startCache(t *testing.T, objs ...runtime.Object) (*Cache, *fakeClient) {
	t.Helper()
	client := fakeclient.NewClientset(objs...)
	c, err := NewCache(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); c.Shutdown() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c, client
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

// rrs renders records compactly: "A 10.43.5.5", "SRV 0 50 5432 db-0...".
func rrs(list []dns.RR) []string {
	var out []string
	for _, rr := range list {
		if _, ok := rr.(*dns.OPT); ok {
			continue
		}
		f := strings.Fields(rr.String())
		out = append(out, strings.Join(f[3:], " "))
	}
	return out
}
