package scheduler

import corev1 "k8s.io/api/core/v1"

const anyIP = "0.0.0.0"

type protoPort struct {
	protocol corev1.Protocol
	port     int32
}

// HostPorts maps host IP to the protocol/ports used on it.
type HostPorts map[string]map[protoPort]struct{}

func normPort(p corev1.ContainerPort) (string, protoPort) {
	ip := p.HostIP
	if ip == "" {
		ip = anyIP
	}
	proto := p.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	return ip, protoPort{protocol: proto, port: p.HostPort}
}

func (h HostPorts) add(p corev1.ContainerPort) {
	ip, pp := normPort(p)
	if h[ip] == nil {
		h[ip] = map[protoPort]struct{}{}
	}
	h[ip][pp] = struct{}{}
}

// conflicts reports whether p clashes with a used port; 0.0.0.0 clashes
// with every IP, as upstream's HostPortInfo.CheckConflict.
func (h HostPorts) conflicts(p corev1.ContainerPort) bool {
	ip, pp := normPort(p)
	if ip == anyIP {
		for _, m := range h {
			if _, ok := m[pp]; ok {
				return true
			}
		}
		return false
	}
	for _, key := range []string{ip, anyIP} {
		if _, ok := h[key][pp]; ok {
			return true
		}
	}
	return false
}

func (h HostPorts) addPod(pod *corev1.Pod) {
	for _, p := range podHostPorts(pod) {
		h.add(p)
	}
}

// podHostPorts lists the ports with a hostPort of the pod's containers
// and of its sidecars (restartable init containers), as upstream's
// GetHostPorts; plain init containers have exited before the app starts.
func podHostPorts(pod *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	add := func(c *corev1.Container) {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		if isRestartable(&pod.Spec.InitContainers[i]) {
			add(&pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	return out
}
