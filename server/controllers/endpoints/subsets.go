package endpoints

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// subsetsFor packs endpoints into Endpoints subsets: addresses with the
// same port set share a subset (upstream's RepackSubsets), everything
// sorted so equal inputs give equal objects.
func subsetsFor(svc *corev1.Service, eps []endpoint) []corev1.EndpointSubset {
	type group struct {
		ports    []corev1.EndpointPort
		ready    []corev1.EndpointAddress
		notReady []corev1.EndpointAddress
	}
	groups := map[string]*group{}
	var order []string
	for _, e := range eps {
		ports := endpointPorts(e.ports)
		k := portsKey(ports)
		g := groups[k]
		if g == nil {
			g = &group{ports: ports}
			groups[k] = g
			order = append(order, k)
		}
		addr := address(svc, e.pod)
		if e.ready {
			g.ready = append(g.ready, addr)
		} else {
			g.notReady = append(g.notReady, addr)
		}
	}
	sort.Strings(order)
	out := make([]corev1.EndpointSubset, 0, len(order))
	for _, k := range order {
		g := groups[k]
		out = append(out, corev1.EndpointSubset{Addresses: g.ready, NotReadyAddresses: g.notReady, Ports: g.ports})
	}
	return out
}

func endpointPorts(rps []resolvedPort) []corev1.EndpointPort {
	out := make([]corev1.EndpointPort, 0, len(rps))
	for _, p := range rps {
		out = append(out, corev1.EndpointPort{Name: p.name, Port: p.port, Protocol: p.protocol, AppProtocol: p.appProto})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func portsKey(ps []corev1.EndpointPort) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Name + "/" + strconv.Itoa(int(p.Port)) + "/" + string(p.Protocol) + ",")
	}
	return b.String()
}

// address is a pod's EndpointAddress; the hostname is set only for pods
// whose subdomain is this Service (their DNS name).
func address(svc *corev1.Service, p *corev1.Pod) corev1.EndpointAddress {
	a := corev1.EndpointAddress{IP: p.Status.PodIP, TargetRef: &corev1.ObjectReference{Kind: "Pod",
		Namespace: p.Namespace, Name: p.Name, UID: p.UID}}
	if p.Spec.NodeName != "" {
		n := p.Spec.NodeName
		a.NodeName = &n
	}
	if p.Spec.Hostname != "" && p.Spec.Subdomain == svc.Name {
		a.Hostname = p.Spec.Hostname
	}
	return a
}
