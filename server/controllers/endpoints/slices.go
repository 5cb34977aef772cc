package endpoints

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const (
	// managedBy values of the two slice writers.
	managedBySlices    = "endpointslice-controller.k8s.io"
	managedByMirroring = "endpointslicemirroring-controller.k8s.io"
	// maxPerSlice is upstream's --max-endpoints-per-slice default.
	maxPerSlice = 100
)

// desiredSlice is the content of one slice: ports plus endpoints.
type desiredSlice struct {
	ports     []discoveryv1.EndpointPort
	endpoints []discoveryv1.Endpoint
}

// slicesFor groups svc's endpoints by port set into slices of at most
// maxPerSlice endpoints.
func slicesFor(svc *corev1.Service, eps []endpoint) []desiredSlice {
	byKey := map[string]*desiredSlice{}
	var keys []string
	for _, e := range eps {
		ports := slicePorts(e.ports)
		k := slicePortsKey(ports)
		if byKey[k] == nil {
			byKey[k] = &desiredSlice{ports: ports}
			keys = append(keys, k)
		}
		byKey[k].endpoints = append(byKey[k].endpoints, sliceEndpoint(svc, e))
	}
	sort.Strings(keys)
	var out []desiredSlice
	for _, k := range keys {
		d := byKey[k]
		for len(d.endpoints) > maxPerSlice {
			out = append(out, desiredSlice{ports: d.ports, endpoints: d.endpoints[:maxPerSlice]})
			d.endpoints = d.endpoints[maxPerSlice:]
		}
		out = append(out, *d)
	}
	return out
}

func sliceEndpoint(svc *corev1.Service, e endpoint) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{Addresses: []string{e.ip},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(e.ready), Serving: ptr.To(e.serving || svc.Spec.PublishNotReadyAddresses),
			Terminating: ptr.To(e.terminating)},
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: e.pod.Namespace, Name: e.pod.Name, UID: e.pod.UID}}
	if e.pod.Spec.NodeName != "" {
		ep.NodeName = ptr.To(e.pod.Spec.NodeName)
	}
	if e.pod.Spec.Hostname != "" && e.pod.Spec.Subdomain == svc.Name {
		ep.Hostname = ptr.To(e.pod.Spec.Hostname)
	}
	return ep
}

func slicePorts(rps []resolvedPort) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, 0, len(rps))
	for _, p := range rps {
		out = append(out, discoveryv1.EndpointPort{Name: ptr.To(p.name), Port: ptr.To(p.port), Protocol: ptr.To(p.protocol), AppProtocol: p.appProto})
	}
	sort.Slice(out, func(i, j int) bool { return *out[i].Name < *out[j].Name })
	return out
}

func slicePortsKey(ps []discoveryv1.EndpointPort) string {
	eps := make([]corev1.EndpointPort, 0, len(ps))
	for _, p := range ps {
		eps = append(eps, corev1.EndpointPort{Name: *p.Name, Port: *p.Port, Protocol: *p.Protocol})
	}
	return portsKey(eps)
}

// mirrorSlices converts a selector-less Service's Endpoints into slices
// (the EndpointSliceMirroring controller).
func mirrorSlices(ep *corev1.Endpoints) []desiredSlice {
	var out []desiredSlice
	for _, ss := range ep.Subsets {
		d := desiredSlice{}
		for _, p := range ss.Ports {
			d.ports = append(d.ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(p.Port),
				Protocol: ptr.To(p.Protocol), AppProtocol: p.AppProtocol})
		}
		for _, a := range ss.Addresses {
			d.endpoints = append(d.endpoints, mirrorEndpoint(a, true))
		}
		for _, a := range ss.NotReadyAddresses {
			d.endpoints = append(d.endpoints, mirrorEndpoint(a, false))
		}
		out = append(out, d)
	}
	return out
}

func mirrorEndpoint(a corev1.EndpointAddress, ready bool) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{Addresses: []string{a.IP}, NodeName: a.NodeName, TargetRef: a.TargetRef,
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(false)}}
	if a.Hostname != "" {
		ep.Hostname = ptr.To(a.Hostname)
	}
	return ep
}

// sliceMeta is the metadata of a new slice of svc.
func sliceMeta(svc *corev1.Service, managedBy string) metav1.ObjectMeta {
	labels := map[string]string{}
	for k, v := range svc.Labels {
		labels[k] = v
	}
	labels[discoveryv1.LabelServiceName] = svc.Name
	labels[discoveryv1.LabelManagedBy] = managedBy
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		labels[corev1.IsHeadlessService] = ""
	}
	return metav1.ObjectMeta{GenerateName: svc.Name + "-", Namespace: svc.Namespace, Labels: labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(svc, corev1.SchemeGroupVersion.WithKind("Service"))}}
}
