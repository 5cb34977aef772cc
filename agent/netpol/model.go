package netpol

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// podInfo is what the compiler knows about a pod.
type podInfo struct {
	Namespace, Name string
	IPs             []netip.Addr // IPv4 pod IPs
	Labels          map[string]string
	Ports           []corev1.ContainerPort // the containers' named ports
	Local           bool                   // bound to this node
}

func (p podInfo) key() string { return p.Namespace + "/" + p.Name }

// snapshot is the cluster state one sync compiles.
type snapshot struct {
	Pods       []podInfo                    // sorted by key
	Namespaces map[string]map[string]string // namespace → labels
	Policies   []*networkingv1.NetworkPolicy
}

// nsNameLabel is set on every Namespace by upstream API servers;
// policies select namespaces by it, so it is assumed when missing.
const nsNameLabel = "kubernetes.io/metadata.name"

// nsLabels returns the namespace's labels with nsNameLabel.
func (s snapshot) nsLabels(ns string) map[string]string {
	out := map[string]string{nsNameLabel: ns}
	for k, v := range s.Namespaces[ns] {
		if k != nsNameLabel {
			out[k] = v
		}
	}
	return out
}

// podFromAPI turns a Pod into a podInfo; ok is false for pods that take
// no part (host network, finished, no IPv4 address yet).
func podFromAPI(p *corev1.Pod, node string) (podInfo, bool) {
	if p.Spec.HostNetwork || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return podInfo{}, false
	}
	info := podInfo{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels, Local: p.Spec.NodeName == node}
	ips := []string{p.Status.PodIP}
	for _, ip := range p.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is4() || containsAddr(info.IPs, a) {
			continue
		}
		info.IPs = append(info.IPs, a)
	}
	if len(info.IPs) == 0 {
		return podInfo{}, false
	}
	for _, c := range p.Spec.Containers {
		for _, port := range c.Ports {
			if port.Name != "" {
				info.Ports = append(info.Ports, port)
			}
		}
	}
	return info, true
}

func containsAddr(list []netip.Addr, a netip.Addr) bool {
	for _, x := range list {
		if x == a {
			return true
		}
	}
	return false
}

// namedPort resolves a named port of protocol proto on the pod.
func (p podInfo) namedPort(name string, proto corev1.Protocol) (int32, bool) {
	for _, cp := range p.Ports {
		cproto := cp.Protocol
		if cproto == "" {
			cproto = corev1.ProtocolTCP
		}
		if cp.Name == name && cproto == proto {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}
