package kubelet

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/qos"
)

// rejection is why admission refused a pod (its status reason and message).
type rejection struct {
	Reason, Message string
}

// admit checks that pod fits the node's allocatable beside the admitted
// pods and that its host ports are free, as kubelet's predicate admit
// handler does. nil means admitted.
func admit(pod *corev1.Pod, admitted []*corev1.Pod, allocatable corev1.ResourceList) *rejection {
	if r := admitSysctls(pod); r != nil {
		return r
	}
	if n, ok := allocatable[corev1.ResourcePods]; ok && int64(len(admitted)+1) > n.Value() {
		return &rejection{"OutOfpods", fmt.Sprintf("Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", len(admitted), n.Value())}
	}
	req := qos.PodRequests(pod)
	var usedCPU, usedMem int64
	for _, p := range admitted {
		r := qos.PodRequests(p)
		usedCPU += qos.MilliCPU(r)
		usedMem += qos.MemoryBytes(r)
	}
	if c, ok := allocatable[corev1.ResourceCPU]; ok {
		if want := qos.MilliCPU(req); want > 0 && usedCPU+want > c.MilliValue() {
			return &rejection{"OutOfcpu", fmt.Sprintf("Node didn't have enough resource: cpu, requested: %d, used: %d, capacity: %d", want, usedCPU, c.MilliValue())}
		}
	}
	if m, ok := allocatable[corev1.ResourceMemory]; ok {
		if want := qos.MemoryBytes(req); want > 0 && usedMem+want > m.Value() {
			return &rejection{"OutOfmemory", fmt.Sprintf("Node didn't have enough resource: memory, requested: %d, used: %d, capacity: %d", want, usedMem, m.Value())}
		}
	}
	if hostPortConflict(pod, admitted) {
		return &rejection{"NodePorts", "Pod was rejected: node(s) didn't have free ports for the requested pod ports"}
	}
	return nil
}

// safeSysctls are kubelet's default allowed sysctls (namespaced, safe
// to set per pod); others need kubelet's --allowed-unsafe-sysctls, which
// orch does not offer.
var safeSysctls = map[string]bool{
	"kernel.shm_rmid_forced": true, "net.ipv4.ip_local_port_range": true, "net.ipv4.tcp_syncookies": true,
	"net.ipv4.ping_group_range": true, "net.ipv4.ip_unprivileged_port_start": true, "net.ipv4.ip_local_reserved_ports": true,
	"net.ipv4.tcp_keepalive_time": true, "net.ipv4.tcp_fin_timeout": true, "net.ipv4.tcp_keepalive_intvl": true,
	"net.ipv4.tcp_keepalive_probes": true, "net.ipv4.tcp_rmem": true, "net.ipv4.tcp_wmem": true,
}

// admitSysctls refuses a pod setting a sysctl outside the safe set, as
// kubelet's sysctl admit handler does (reason SysctlForbidden).
func admitSysctls(pod *corev1.Pod) *rejection {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	for _, s := range pod.Spec.SecurityContext.Sysctls {
		if name := strings.ReplaceAll(s.Name, "/", "."); !safeSysctls[name] {
			return &rejection{"SysctlForbidden", fmt.Sprintf("forbidden sysctl: %q not allowlisted", s.Name)}
		}
	}
	return nil
}

type hostPort struct {
	ip, proto string
	port      int32
}

func hostPorts(pod *corev1.Pod) []hostPort {
	var out []hostPort
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, p := range c.Ports {
				if p.HostPort <= 0 {
					continue
				}
				ip, proto := p.HostIP, string(p.Protocol)
				if ip == "" {
					ip = "0.0.0.0"
				}
				if proto == "" {
					proto = "TCP"
				}
				out = append(out, hostPort{ip, proto, p.HostPort})
			}
		}
	}
	return out
}

func hostPortConflict(pod *corev1.Pod, admitted []*corev1.Pod) bool {
	want := hostPorts(pod)
	if len(want) == 0 {
		return false
	}
	for _, p := range admitted {
		for _, have := range hostPorts(p) {
			for _, w := range want {
				if w.port == have.port && w.proto == have.proto &&
					(w.ip == have.ip || w.ip == "0.0.0.0" || have.ip == "0.0.0.0") {
					return true
				}
			}
		}
	}
	return false
}
