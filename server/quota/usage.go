package quota

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource names a quota can hold besides count/<resource>[.<group>].
const (
	Pods                   = corev1.ResourcePods
	Services               = corev1.ResourceServices
	ServicesNodePorts      = corev1.ResourceServicesNodePorts
	ServicesLoadBalancers  = corev1.ResourceServicesLoadBalancers
	ConfigMaps             = corev1.ResourceConfigMaps
	Secrets                = corev1.ResourceSecrets
	Claims                 = corev1.ResourcePersistentVolumeClaims
	RequestsStorage        = corev1.ResourceRequestsStorage
	storageClassSuffix     = ".storageclass.storage.k8s.io/"
	replicationControllers = corev1.ResourceReplicationControllers
	resourceQuotas         = corev1.ResourceQuotas
)

// CountName is the object-count resource of gr: count/pods,
// count/deployments.apps.
func CountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// legacyCounts are the core resources counted under a name of their own
// besides count/<resource>, and only counted (see CountOnly).
var legacyCounts = map[string]corev1.ResourceName{
	"configmaps": ConfigMaps, "secrets": Secrets,
	"replicationcontrollers": replicationControllers, "resourcequotas": resourceQuotas,
}

// CountOnly reports whether an object of gr consumes only counts, read
// from nothing but its existence: everything but pods, services and
// persistent volume claims. Their usage can be taken from metadata alone.
func CountOnly(gr schema.GroupResource) bool {
	if gr.Group != "" {
		return true
	}
	switch gr.Resource {
	case "pods", "services", "persistentvolumeclaims":
		return false
	}
	return true
}

// Usage is what obj of resource gr consumes. Terminal pods consume nothing.
// For CountOnly resources obj may be any object, metadata only included.
func Usage(gr schema.GroupResource, obj any) corev1.ResourceList {
	u := corev1.ResourceList{CountName(gr): *resource.NewQuantity(1, resource.DecimalSI)}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	if gr.Group == "" {
		if name, ok := legacyCounts[gr.Resource]; ok {
			u[name] = one
		}
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		if Terminal(o) {
			return corev1.ResourceList{}
		}
		u[Pods] = one
		addPodCompute(u, o)
	case *corev1.Service:
		u[Services] = one
		addServicePorts(u, o)
	case *corev1.PersistentVolumeClaim:
		u[Claims] = one
		addClaimStorage(u, o)
	}
	return u
}

// Terminal reports whether a pod no longer counts against quota.
func Terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func addPodCompute(u corev1.ResourceList, p *corev1.Pod) {
	req, lim := PodRequests(p, false), PodRequests(p, true)
	for name, q := range req {
		u[corev1.ResourceName("requests."+string(name))] = q
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage {
			u[name] = q
		}
	}
	for name, q := range lim {
		u[corev1.ResourceName("limits."+string(name))] = q
	}
}

// PodRequests is the pod's effective requests (or limits): the larger of
// the app containers' sum (plus restartable init containers) and any init
// container, plus overhead — as upstream's resourcehelper computes it.
func PodRequests(p *corev1.Pod, limits bool) corev1.ResourceList {
	pick := func(c *corev1.Container) corev1.ResourceList {
		if limits {
			return c.Resources.Limits
		}
		return c.Resources.Requests
	}
	sum := corev1.ResourceList{}
	for i := range p.Spec.Containers {
		addList(sum, pick(&p.Spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addList(sum, pick(c))
			addList(sidecars, pick(c))
			continue
		}
		init := corev1.ResourceList{}
		addList(init, pick(c))
		addList(init, sidecars)
		maxList(sum, init)
	}
	addList(sum, p.Spec.Overhead)
	return sum
}

func addList(into, add corev1.ResourceList) {
	for k, v := range add {
		q := into[k]
		q.Add(v)
		into[k] = q
	}
}

func maxList(into, other corev1.ResourceList) {
	for k, v := range other {
		if q, ok := into[k]; !ok || v.Cmp(q) > 0 {
			into[k] = v.DeepCopy()
		}
	}
}

func addServicePorts(u corev1.ResourceList, s *corev1.Service) {
	switch s.Spec.Type {
	case corev1.ServiceTypeNodePort:
		u[ServicesNodePorts] = *resource.NewQuantity(int64(len(s.Spec.Ports)), resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		u[ServicesLoadBalancers] = *resource.NewQuantity(1, resource.DecimalSI)
		u[ServicesNodePorts] = *resource.NewQuantity(int64(len(s.Spec.Ports)), resource.DecimalSI)
	}
}

func addClaimStorage(u corev1.ResourceList, c *corev1.PersistentVolumeClaim) {
	q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return
	}
	u[RequestsStorage] = q
	if c.Spec.StorageClassName != nil && *c.Spec.StorageClassName != "" {
		cls := *c.Spec.StorageClassName
		u[corev1.ResourceName(cls+storageClassSuffix+string(RequestsStorage))] = q
		u[corev1.ResourceName(cls+storageClassSuffix+string(Claims))] = *resource.NewQuantity(1, resource.DecimalSI)
	}
}

// Add returns a+b.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	addList(out, a)
	addList(out, b)
	return out
}

// Subtract returns a-b for the names of a.
func Subtract(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range a {
		q := v.DeepCopy()
		if s, ok := b[k]; ok {
			q.Sub(s)
		}
		out[k] = q
	}
	return out
}

// computeNames are the quota names that require every container to state
// a request or limit.
func computeNames(name corev1.ResourceName) (corev1.ResourceName, bool, bool) {
	s := string(name)
	switch {
	case s == "cpu" || s == "memory" || s == "ephemeral-storage":
		return name, false, true
	case strings.HasPrefix(s, "requests."):
		r := corev1.ResourceName(strings.TrimPrefix(s, "requests."))
		return r, false, r == corev1.ResourceCPU || r == corev1.ResourceMemory || r == corev1.ResourceEphemeralStorage
	case strings.HasPrefix(s, "limits."):
		r := corev1.ResourceName(strings.TrimPrefix(s, "limits."))
		return r, true, r == corev1.ResourceCPU || r == corev1.ResourceMemory || r == corev1.ResourceEphemeralStorage
	}
	return "", false, false
}
