package envvars

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// Sources gives access to the ConfigMaps and Secrets a pod references. A
// missing object must be reported as an apierrors NotFound error, so that
// optional references can be told apart from real failures.
type Sources interface {
	GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// Inputs are the facts about the pod and node that the pod object itself
// may not carry yet when the environment is built.
type Inputs struct {
	PodIP   string   // status.podIP (falls back to pod.Status.PodIP)
	PodIPs  []string // status.podIPs (falls back to PodIP, then pod.Status.PodIPs)
	HostIP  string   // status.hostIP
	HostIPs []string // status.hostIPs (falls back to HostIP)
	// NodeName and ServiceAccount are used when the pod's spec.nodeName /
	// spec.serviceAccountName are empty.
	NodeName       string
	ServiceAccount string
	// Allocatable is the node's allocatable resources: resourceFieldRef
	// limits that a container leaves unset default to it, as in the kubelet.
	Allocatable corev1.ResourceList
	// ServiceEnv holds service link variables (KUBERNETES_SERVICE_HOST...).
	// They may be referenced by $(VAR), and are appended after the
	// container's own variables unless it defines the same name.
	ServiceEnv map[string]string
}

func (in Inputs) podIPs(pod *corev1.Pod) []string {
	if len(in.PodIPs) > 0 {
		return in.PodIPs
	}
	if in.PodIP != "" {
		return []string{in.PodIP}
	}
	var ips []string
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = []string{pod.Status.PodIP}
	}
	return ips
}

func (in Inputs) hostIPs(pod *corev1.Pod) []string {
	if len(in.HostIPs) > 0 {
		return in.HostIPs
	}
	if in.HostIP != "" {
		return []string{in.HostIP}
	}
	var ips []string
	for _, ip := range pod.Status.HostIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && pod.Status.HostIP != "" {
		ips = []string{pod.Status.HostIP}
	}
	return ips
}
