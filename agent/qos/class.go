package qos

import (
	corev1 "k8s.io/api/core/v1"
)

// qosResources are the resources that decide the QoS class.
var qosResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// Class returns the pod's QoS class as kubelet's GetPodQOS does: the class
// recorded in status (it is immutable once set) or else ComputeClass.
func Class(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return ComputeClass(pod)
}

// ComputeClass derives the QoS class from the containers' resources, as
// kubelet's ComputePodQOS does with pod-level resources disabled:
// Guaranteed when every container (init ones included) has cpu and memory
// limits equal to non-zero requests, BestEffort when no container has any
// request or limit, Burstable otherwise.
func ComputeClass(pod *corev1.Pod) corev1.PodQOSClass {
	var class corev1.PodQOSClass
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := containerClass(&list[i].Resources)
			switch {
			case c == corev1.PodQOSBurstable:
				return c
			case class == "":
				class = c
			case class != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if class == "" {
		return corev1.PodQOSBestEffort
	}
	return class
}

func containerClass(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var class corev1.PodQOSClass
	for _, name := range qosResources {
		c := resourceClass(r, name)
		switch {
		case c == corev1.PodQOSBurstable:
			return c
		case class == "":
			class = c
		case class != c:
			return corev1.PodQOSBurstable
		}
	}
	return class
}

func resourceClass(r *corev1.ResourceRequirements, name corev1.ResourceName) corev1.PodQOSClass {
	req := r.Requests[name]
	lim := r.Limits[name]
	switch {
	case !req.Equal(lim):
		return corev1.PodQOSBurstable
	case req.IsZero():
		return corev1.PodQOSBestEffort
	default:
		return corev1.PodQOSGuaranteed
	}
}
