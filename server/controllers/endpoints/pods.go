package endpoints

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// endpoint is one pod's part in a Service: its address and the ports its
// targetPorts resolve to.
type endpoint struct {
	pod         *corev1.Pod
	ip          string
	ready       bool // counts as ready (or publishNotReadyAddresses)
	serving     bool // the pod is ready, terminating or not
	terminating bool
	ports       []resolvedPort
}

// resolvedPort is a service port with its targetPort resolved for a pod.
type resolvedPort struct {
	name     string
	port     int32
	protocol corev1.Protocol
	appProto *string
}

// endpointsFor computes the endpoints of svc from the candidate pods (those
// its selector matches), as upstream's ShouldPodBeInEndpoints and
// podToEndpointAddressForService decide. includeTerminating keeps
// terminating pods (EndpointSlices do, Endpoints do not).
func endpointsFor(svc *corev1.Service, pods []*corev1.Pod, includeTerminating bool) []endpoint {
	var out []endpoint
	for _, p := range pods {
		if !inEndpoints(p, includeTerminating) {
			continue
		}
		ready := podReady(p)
		e := endpoint{pod: p, ip: p.Status.PodIP, serving: ready, terminating: p.DeletionTimestamp != nil,
			ready: (ready && p.DeletionTimestamp == nil) || svc.Spec.PublishNotReadyAddresses}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			n, ok := findPort(p, sp)
			if !ok {
				continue
			}
			e.ports = append(e.ports, resolvedPort{name: sp.Name, port: n, protocol: sp.Protocol, appProto: sp.AppProtocol})
		}
		if len(e.ports) > 0 || len(svc.Spec.Ports) == 0 {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ip < out[j].ip })
	return out
}

// inEndpoints: pods with an IP that are not terminal (and not terminating,
// unless asked).
func inEndpoints(p *corev1.Pod, includeTerminating bool) bool {
	if p.Status.PodIP == "" || p.Spec.HostNetwork && p.Status.PodIP == "" {
		return false
	}
	if p.DeletionTimestamp != nil && !includeTerminating {
		return false
	}
	switch p.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return true
}

// findPort resolves a service port's targetPort in pod (upstream's
// podutil.FindPort).
func findPort(p *corev1.Pod, sp *corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	switch {
	case tp.Type == intstr.String && tp.StrVal != "":
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == tp.StrVal && cp.Protocol == sp.Protocol {
					return cp.ContainerPort, true
				}
			}
		}
		return 0, false
	case tp.Type == intstr.Int && tp.IntVal != 0:
		return tp.IntVal, true
	}
	return sp.Port, true
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
