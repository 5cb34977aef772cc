package kubelet

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/network"
)

// podPortMappings lists the pod's host ports (ports[].hostPort of its
// containers) for the pod network; hostNetwork pods need none.
func podPortMappings(pod *corev1.Pod) []network.PortMapping {
	if pod.Spec.HostNetwork {
		return nil
	}
	var out []network.PortMapping
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			proto := strings.ToLower(string(p.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			out = append(out, network.PortMapping{HostIP: p.HostIP, HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: proto})
		}
	}
	return out
}
