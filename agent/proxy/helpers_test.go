package proxy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// testSvc is a ClusterIP service with one TCP port "p80" (80 -> 8080).
func testSvc(ns, name, ip string, mods ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: []string{ip},
			Ports: []corev1.ServicePort{{Name: "p80", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	for _, m := range mods {
		m(s)
	}
	return s
}

// testEP is one endpoint of a slice.
type testEP struct {
	ip    string
	node  string
	ready bool
	term  bool // terminating (and serving)
}

func testSlice(ns, svc, suffix string, port int32, eps ...testEP) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc + "-" + suffix,
		Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("p80"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}}}
	for _, e := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.ip}, NodeName: ptr.To(e.node),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(e.ready), Serving: ptr.To(e.ready || e.term),
				Terminating: ptr.To(e.term)}})
	}
	return s
}

func ready(ips ...string) []testEP {
	var out []testEP
	for i, ip := range ips {
		out = append(out, testEP{ip: ip, node: fmt.Sprintf("node%d", i%2), ready: true})
	}
	return out
}
