package qos

import (
	corev1 "k8s.io/api/core/v1"
)

// PodRequests returns the pod's effective requests as upstream's
// resource.PodRequests does (pod-level resources skipped): the sum over app
// containers and restartable init containers (native sidecars), raised to the
// largest need of any init container (which runs beside the sidecars started
// before it), plus spec.overhead.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	reqs := aggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests })
	if pod.Spec.Overhead != nil {
		addList(reqs, pod.Spec.Overhead)
	}
	return reqs
}

// PodLimits returns the pod's effective limits as upstream's resource.PodLimits
// does: aggregated like PodRequests, with overhead added only to limits that
// are set and non-zero.
func PodLimits(pod *corev1.Pod) corev1.ResourceList {
	limits := aggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits })
	for name, q := range pod.Spec.Overhead {
		if v, ok := limits[name]; ok && !v.IsZero() {
			v.Add(q)
			limits[name] = v
		}
	}
	return limits
}

// IsRestartableInit reports whether c is a native sidecar: an init container
// with restartPolicy Always.
func IsRestartableInit(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// aggregate follows the sidecar KEP's formula (KEP-753): an init container i
// needs its own resources plus those of every restartable init container
// before it; the pod needs the max of that and the sum of all long-running
// containers.
func aggregate(pod *corev1.Pod, get func(*corev1.Container) corev1.ResourceList) corev1.ResourceList {
	result := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addList(result, get(&pod.Spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		own := get(c)
		if IsRestartableInit(c) {
			addList(result, own)
			addList(sidecars, own)
			maxList(initMax, sidecars)
			continue
		}
		combined := corev1.ResourceList{}
		addList(combined, own)
		addList(combined, sidecars)
		maxList(initMax, combined)
	}
	maxList(result, initMax)
	return result
}

func addList(list, add corev1.ResourceList) {
	for name, q := range add {
		if v, ok := list[name]; ok {
			v.Add(q)
			list[name] = v
			continue
		}
		list[name] = q.DeepCopy()
	}
}

func maxList(list, other corev1.ResourceList) {
	for name, q := range other {
		if v, ok := list[name]; !ok || q.Cmp(v) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}

// MilliCPU returns the list's cpu in millicores (0 when absent).
func MilliCPU(list corev1.ResourceList) int64 {
	q, ok := list[corev1.ResourceCPU]
	if !ok {
		return 0
	}
	return q.MilliValue()
}

// MemoryBytes returns the list's memory in bytes (0 when absent).
func MemoryBytes(list corev1.ResourceList) int64 {
	q, ok := list[corev1.ResourceMemory]
	if !ok {
		return 0
	}
	return q.Value()
}
