package qos

import (
	corev1 "k8s.io/api/core/v1"
)

// OOM score adjustments, as kubelet's pkg/kubelet/qos/policy.go.
const (
	GuaranteedOOMScoreAdj = -997
	BestEffortOOMScoreAdj = 1000
	// SystemCriticalPriority is scheduling.SystemCriticalPriority (2e9).
	SystemCriticalPriority = int32(2 * 1000000000)
	// SystemNodeCritical is the priority class name of node-critical pods.
	SystemNodeCritical = "system-node-critical"
	// configSourceAnnotation and configMirrorAnnotation mark static and
	// mirror pods, as kubelet's pkg/kubelet/types.
	configSourceAnnotation = "kubernetes.io/config.source"
	configMirrorAnnotation = "kubernetes.io/config.mirror"
	apiserverSource        = "api"
)

// OOMScoreAdj returns the oom_score_adj for one container of the pod as
// kubelet's GetContainerOOMScoreAdjust does (pod-level resources and DRA off):
// node-critical pods and Guaranteed pods get -997, BestEffort 1000, and
// Burstable 1000 - 1000*memoryRequest/memoryCapacity clamped to [3, 999]
// (kubelet's bounds: not below 1000-997, and 1000 becomes 999). A native
// sidecar gets no higher a score than the pod's smallest app container.
func OOMScoreAdj(pod *corev1.Pod, container *corev1.Container, memoryCapacity int64) int {
	if IsNodeCritical(pod) {
		return GuaranteedOOMScoreAdj
	}
	switch Class(pod) {
	case corev1.PodQOSGuaranteed:
		return GuaranteedOOMScoreAdj
	case corev1.PodQOSBestEffort:
		return BestEffortOOMScoreAdj
	}
	if memoryCapacity <= 0 {
		return BestEffortOOMScoreAdj - 1
	}
	adj := 1000 - (1000*memRequest(container))/memoryCapacity
	if isSidecar(pod, container) && len(pod.Spec.Containers) > 0 {
		minAdj := 1000 - (1000*minAppMemory(pod))/memoryCapacity
		if adj > minAdj {
			adj = minAdj
		}
	}
	if adj < 1000+GuaranteedOOMScoreAdj {
		return 1000 + GuaranteedOOMScoreAdj
	}
	if adj == BestEffortOOMScoreAdj {
		return int(adj - 1)
	}
	return int(adj)
}

// ClampOOMScoreAdj returns want, or own when want is lower: a process without
// CAP_SYS_RESOURCE may not set a score below its own, so the runtime would
// fail. The caller logs when the value changed (containerd's
// restrict_oom_score_adj).
func ClampOOMScoreAdj(want, own int) int {
	if want < own {
		return own
	}
	return want
}

// IsNodeCritical reports whether the pod is critical (static, mirror or with
// priority >= SystemCriticalPriority) and of class system-node-critical, as
// kubelet's types.IsNodeCriticalPod.
func IsNodeCritical(pod *corev1.Pod) bool {
	return isCritical(pod) && pod.Spec.PriorityClassName == SystemNodeCritical
}

func isCritical(pod *corev1.Pod) bool {
	if src, ok := pod.Annotations[configSourceAnnotation]; ok && src != apiserverSource {
		return true // static pod
	}
	if _, ok := pod.Annotations[configMirrorAnnotation]; ok {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= SystemCriticalPriority
}

func memRequest(c *corev1.Container) int64 {
	return c.Resources.Requests.Memory().Value()
}

func isSidecar(pod *corev1.Pod, c *corev1.Container) bool {
	if !IsRestartableInit(c) {
		return false
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			return true
		}
	}
	return false
}

func minAppMemory(pod *corev1.Pod) int64 {
	m := memRequest(&pod.Spec.Containers[0])
	for i := 1; i < len(pod.Spec.Containers); i++ {
		if v := memRequest(&pod.Spec.Containers[i]); v < m {
			m = v
		}
	}
	return m
}
