package scheduler

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Defaults used by the scoring plugins for containers without requests,
// as upstream's schedutil.DefaultMilliCPURequest / DefaultMemoryRequest.
const (
	defaultMilliCPURequest int64 = 100
	defaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// Resource is the subset of resources the scheduler accounts for.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// Scalar holds extended resources, hugepages and the other scalar
	// resources (upstream's ScalarResources). Never shared between two
	// Resources: the methods below copy into their own map.
	Scalar map[corev1.ResourceName]int64
}

func (r *Resource) add(o Resource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	for n, v := range o.Scalar {
		r.setScalar(n, r.Scalar[n]+v)
	}
}

func (r *Resource) sub(o Resource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	for n, v := range o.Scalar {
		r.setScalar(n, r.Scalar[n]-v)
	}
}

func (r *Resource) setMax(o Resource) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	for n, v := range o.Scalar {
		if v > r.Scalar[n] {
			r.setScalar(n, v)
		}
	}
}

func (r *Resource) setScalar(n corev1.ResourceName, v int64) {
	if r.Scalar == nil {
		r.Scalar = map[corev1.ResourceName]int64{}
	}
	r.Scalar[n] = v
}

func resourceFromList(l corev1.ResourceList) Resource {
	r := Resource{
		MilliCPU:         quantityMilli(l, corev1.ResourceCPU),
		Memory:           quantityValue(l, corev1.ResourceMemory),
		EphemeralStorage: quantityValue(l, corev1.ResourceEphemeralStorage),
	}
	for n, q := range l {
		if isScalarResource(n) {
			r.setScalar(n, q.Value())
		}
	}
	return r
}

// isScalarResource is upstream's IsScalarResourceName: extended resources
// (a domain not under kubernetes.io), hugepages, attachable volumes and
// prefixed native resources.
func isScalarResource(n corev1.ResourceName) bool {
	s := string(n)
	switch {
	case strings.HasPrefix(s, corev1.ResourceHugePagesPrefix), strings.HasPrefix(s, corev1.ResourceAttachableVolumesPrefix):
		return true
	case !strings.Contains(s, "/"):
		return false // native resources (cpu, memory, pods, ...)
	case strings.Contains(s, "kubernetes.io/"):
		return true // prefixed native resources
	}
	return !strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) // extended resources
}

func quantityMilli(l corev1.ResourceList, name corev1.ResourceName) int64 {
	if q, ok := l[name]; ok {
		return q.MilliValue()
	}
	return 0
}

func quantityValue(l corev1.ResourceList, name corev1.ResourceName) int64 {
	if q, ok := l[name]; ok {
		return q.Value()
	}
	return 0
}

// nonZero applies the scoring defaults to a container's requests.
func nonZero(r Resource) Resource {
	if r.MilliCPU == 0 {
		r.MilliCPU = defaultMilliCPURequest
	}
	if r.Memory == 0 {
		r.Memory = defaultMemoryRequest
	}
	return r
}

func isRestartable(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// PodRequests returns the pod's effective requests as upstream computes them
// (component-helpers resource.PodRequests): the larger of the sum of app
// containers plus sidecars and the peak of the init phase, replaced by
// pod-level requests where set, plus overhead.
// nonZeroReqs applies the scoring defaults per container.
func PodRequests(pod *corev1.Pod, nonZeroReqs bool) Resource {
	conv := func(c *corev1.Container) Resource {
		r := resourceFromList(c.Resources.Requests)
		if nonZeroReqs {
			r = nonZero(r)
		}
		return r
	}
	var reqs Resource
	for i := range pod.Spec.Containers {
		reqs.add(conv(&pod.Spec.Containers[i]))
	}
	var sidecars, initPeak Resource
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cr := conv(c)
		if isRestartable(c) {
			reqs.add(cr)
			sidecars.add(cr)
			cr = sidecars
		} else {
			cr.add(sidecars)
		}
		initPeak.setMax(cr)
	}
	reqs.setMax(initPeak)
	applyPodLevel(&reqs, pod)
	if pod.Spec.Overhead != nil {
		reqs.add(resourceFromList(pod.Spec.Overhead))
	}
	return reqs
}

// applyPodLevel overrides cpu and memory with pod-level requests
// (spec.resources) where set, as upstream's applyPodLevelResources.
func applyPodLevel(reqs *Resource, pod *corev1.Pod) {
	if pod.Spec.Resources == nil {
		return
	}
	if q, ok := pod.Spec.Resources.Requests[corev1.ResourceCPU]; ok {
		reqs.MilliCPU = q.MilliValue()
	}
	if q, ok := pod.Spec.Resources.Requests[corev1.ResourceMemory]; ok {
		reqs.Memory = q.Value()
	}
}

// allocatable reads the node's allocatable resources and pod capacity.
func allocatable(node *corev1.Node) (Resource, int64) {
	a := node.Status.Allocatable
	pods := int64(0)
	if q, ok := a[corev1.ResourcePods]; ok {
		pods = q.Value()
	}
	return resourceFromList(a), pods
}
