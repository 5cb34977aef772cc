package registry

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func leaseRules() rules {
	return rules{
		validate: func(obj runtime.Object) field.ErrorList {
			s := obj.(*coordinationv1.Lease).Spec
			var errs field.ErrorList
			if d := s.LeaseDurationSeconds; d != nil && *d <= 0 {
				errs = append(errs, field.Invalid(field.NewPath("spec", "leaseDurationSeconds"), *d, "must be greater than 0"))
			}
			return append(errs, nonNegative32(s.LeaseTransitions, field.NewPath("spec", "leaseTransitions"))...)
		},
		columns: []metav1.TableColumnDefinition{col("Holder", "string", 0, coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]), ageColumn()},
		row: func(obj runtime.Object) []interface{} {
			return []interface{}{ptr.Deref(obj.(*coordinationv1.Lease).Spec.HolderIdentity, ""), age(obj)}
		},
	}
}

func endpointSliceRules() rules {
	return rules{
		generation: true,
		defaults: func(obj runtime.Object) {
			for i := range obj.(*discoveryv1.EndpointSlice).Ports {
				p := &obj.(*discoveryv1.EndpointSlice).Ports[i]
				if p.Name == nil {
					p.Name = ptr.To("")
				}
				if p.Protocol == nil {
					p.Protocol = ptr.To(corev1.ProtocolTCP)
				}
			}
		},
		prepareUpdate: func(obj, old runtime.Object) {
			// EndpointSlices have no spec: any change but metadata bumps the generation.
			n, o := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
			if !apiequality.Semantic.DeepEqual(n.Endpoints, o.Endpoints) || !apiequality.Semantic.DeepEqual(n.Ports, o.Ports) ||
				n.AddressType != o.AddressType {
				n.Generation = o.Generation + 1
			}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			return validateEndpointSlice(obj.(*discoveryv1.EndpointSlice))
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
			return append(validateEndpointSlice(n), immutable(n.AddressType, o.AddressType, field.NewPath("addressType"))...)
		},
		columns: []metav1.TableColumnDefinition{
			col("AddressType", "string", 0, discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]),
			col("Ports", "string", 0, discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]),
			col("Endpoints", "string", 0, discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]),
			ageColumn(),
		},
		row: func(obj runtime.Object) []interface{} {
			s := obj.(*discoveryv1.EndpointSlice)
			var ports, addrs []string
			for _, p := range s.Ports {
				v := "*"
				if p.Port != nil {
					v = strconv.Itoa(int(*p.Port))
				} else if p.Name != nil {
					v = *p.Name
				}
				ports = append(ports, v)
			}
			for _, e := range s.Endpoints {
				addrs = append(addrs, e.Addresses...)
			}
			return []interface{}{string(s.AddressType), listWithMore(ports), listWithMore(addrs), age(s)}
		},
	}
}

// listWithMore is listWithMoreString: at most 3 items, then "+ N more...".
func listWithMore(items []string) string {
	const max = 3
	if len(items) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:max], ","), len(items)-max)
	}
	if len(items) == 0 {
		return "<unset>"
	}
	return strings.Join(items, ",")
}

func validateEndpointSlice(s *discoveryv1.EndpointSlice) field.ErrorList {
	errs := oneOf(s.AddressType, field.NewPath("addressType"), discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN)
	if len(s.Endpoints) > 1000 {
		errs = append(errs, field.TooMany(field.NewPath("endpoints"), len(s.Endpoints), 1000))
	}
	for i, e := range s.Endpoints {
		ep := field.NewPath("endpoints").Index(i)
		if len(e.Addresses) == 0 || len(e.Addresses) > 100 {
			errs = append(errs, field.Invalid(ep.Child("addresses"), len(e.Addresses), "must contain at least 1 and at most 100 addresses"))
		}
		for j, a := range e.Addresses {
			ap := ep.Child("addresses").Index(j)
			switch s.AddressType {
			case discoveryv1.AddressTypeIPv4:
				if ip := net.ParseIP(a); ip == nil || ip.To4() == nil {
					errs = append(errs, field.Invalid(ap, a, "must be a valid IPv4 address"))
				}
			case discoveryv1.AddressTypeIPv6:
				if ip := net.ParseIP(a); ip == nil || ip.To4() != nil {
					errs = append(errs, field.Invalid(ap, a, "must be a valid IPv6 address"))
				}
			case discoveryv1.AddressTypeFQDN:
				errs = append(errs, dns1123Subdomain(a, ap)...)
			}
		}
		if e.Hostname != nil {
			errs = append(errs, dns1123Label(*e.Hostname, ep.Child("hostname"))...)
		}
	}
	names := sets.New[string]()
	for i, p := range s.Ports {
		pp := field.NewPath("ports").Index(i)
		if p.Name != nil && *p.Name != "" {
			errs = append(errs, dns1123Label(*p.Name, pp.Child("name"))...)
		}
		name := ptr.Deref(p.Name, "")
		if names.Has(name) {
			errs = append(errs, field.Duplicate(pp.Child("name"), name))
		}
		names.Insert(name)
		if p.Protocol != nil {
			errs = append(errs, oneOf(*p.Protocol, pp.Child("protocol"), corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP)...)
		}
		if p.Port != nil {
			errs = append(errs, validatePortNum(*p.Port, pp.Child("port"))...)
		}
	}
	return errs
}

func networkPolicyRules() rules {
	return rules{
		generation: true,
		defaults: func(obj runtime.Object) {
			np := obj.(*networkingv1.NetworkPolicy)
			if len(np.Spec.PolicyTypes) == 0 {
				np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
				if len(np.Spec.Egress) != 0 {
					np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
				}
			}
			for i := range np.Spec.Ingress {
				defaultNetpolPorts(np.Spec.Ingress[i].Ports)
			}
			for i := range np.Spec.Egress {
				defaultNetpolPorts(np.Spec.Egress[i].Ports)
			}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			return validateNetworkPolicy(obj.(*networkingv1.NetworkPolicy))
		},
		columns: []metav1.TableColumnDefinition{
			col("Pod-Selector", "string", 0, networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]), ageColumn(),
		},
		row: func(obj runtime.Object) []interface{} {
			np := obj.(*networkingv1.NetworkPolicy)
			return []interface{}{metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np)}
		},
	}
}

func defaultNetpolPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
}

func validateNetworkPolicy(np *networkingv1.NetworkPolicy) field.ErrorList {
	spec := field.NewPath("spec")
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(&np.Spec.PodSelector, opts, spec.Child("podSelector"))
	peers := func(ps []networkingv1.NetworkPolicyPeer, p *field.Path) {
		for i, peer := range ps {
			pp := p.Index(i)
			n := 0
			if peer.PodSelector != nil {
				n++
				errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, opts, pp.Child("podSelector"))...)
			}
			if peer.NamespaceSelector != nil {
				n++
				errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, opts, pp.Child("namespaceSelector"))...)
			}
			if peer.IPBlock != nil {
				n++
				if _, _, err := net.ParseCIDR(peer.IPBlock.CIDR); err != nil {
					errs = append(errs, field.Invalid(pp.Child("ipBlock", "cidr"), peer.IPBlock.CIDR, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
				}
			}
			if n == 0 {
				errs = append(errs, field.Required(pp, "must specify a peer"))
			} else if peer.IPBlock != nil && n > 1 {
				errs = append(errs, field.Forbidden(pp, "may not specify both ipBlock and another peer"))
			}
		}
	}
	ports := func(ps []networkingv1.NetworkPolicyPort, p *field.Path) {
		for i, port := range ps {
			pp := p.Index(i)
			if port.Protocol != nil {
				errs = append(errs, oneOf(*port.Protocol, pp.Child("protocol"), corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP)...)
			}
			if port.Port != nil {
				errs = append(errs, validatePortOrName(port.Port.IntVal, port.Port.StrVal, pp.Child("port"))...)
			}
		}
	}
	for i, r := range np.Spec.Ingress {
		peers(r.From, spec.Child("ingress").Index(i).Child("from"))
		ports(r.Ports, spec.Child("ingress").Index(i).Child("ports"))
	}
	for i, r := range np.Spec.Egress {
		peers(r.To, spec.Child("egress").Index(i).Child("to"))
		ports(r.Ports, spec.Child("egress").Index(i).Child("ports"))
	}
	for i, t := range np.Spec.PolicyTypes {
		errs = append(errs, oneOf(t, spec.Child("policyTypes").Index(i), networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress)...)
	}
	return errs
}

func ingressRules() rules {
	return rules{
		generation: true,
		validate:   func(obj runtime.Object) field.ErrorList { return validateIngress(obj.(*networkingv1.Ingress)) },
		columns: []metav1.TableColumnDefinition{
			col("Class", "string", 0, "The name of the IngressClass resource that should be used for additional configuration"),
			col("Hosts", "string", 0, "Hosts that incoming requests are matched against before the ingress rule"),
			col("Address", "string", 0, "Address is a list containing ingress points for the load-balancer"),
			col("Ports", "string", 0, "Ports of TLS configurations that open"),
			ageColumn(),
		},
		row: func(obj runtime.Object) []interface{} { return ingressRow(obj.(*networkingv1.Ingress)) },
	}
}

func validateIngress(ing *networkingv1.Ingress) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if len(ing.Spec.Rules) == 0 && ing.Spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(spec, ing.Spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if b := ing.Spec.DefaultBackend; b != nil {
		errs = append(errs, validateIngressBackend(b, spec.Child("defaultBackend"))...)
	}
	for i, r := range ing.Spec.Rules {
		rp := spec.Child("rules").Index(i)
		if r.Host != "" {
			if strings.Contains(r.Host, "*") {
				errs = append(errs, msgs(r.Host, rp.Child("host"), validation.IsWildcardDNS1123Subdomain(r.Host))...)
			} else {
				errs = append(errs, dns1123Subdomain(r.Host, rp.Child("host"))...)
			}
		}
		if r.HTTP == nil {
			continue
		}
		hp := rp.Child("http", "paths")
		if len(r.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(hp, ""))
		}
		for j, path := range r.HTTP.Paths {
			pp := hp.Index(j)
			if path.PathType == nil {
				errs = append(errs, field.Required(pp.Child("pathType"), "pathType must be specified"))
			} else {
				errs = append(errs, oneOf(*path.PathType, pp.Child("pathType"), networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific)...)
				if *path.PathType != networkingv1.PathTypeImplementationSpecific && !strings.HasPrefix(path.Path, "/") {
					errs = append(errs, field.Invalid(pp.Child("path"), path.Path, "must be an absolute path"))
				}
			}
			errs = append(errs, validateIngressBackend(&path.Backend, pp.Child("backend"))...)
		}
	}
	return errs
}

func validateIngressBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Service != nil && b.Resource != nil:
		errs = append(errs, field.Invalid(p, "", "cannot set both resource and service backends"))
	case b.Service != nil:
		if b.Service.Name == "" {
			errs = append(errs, field.Required(p.Child("service", "name"), ""))
		} else {
			errs = append(errs, dns1123Label(b.Service.Name, p.Child("service", "name"))...)
		}
		port := b.Service.Port
		switch {
		case port.Name != "" && port.Number != 0:
			errs = append(errs, field.Invalid(p.Child("service", "port"), port, "cannot set both port name & port number"))
		case port.Name != "":
			errs = append(errs, msgs(port.Name, p.Child("service", "port", "name"), validation.IsValidPortName(port.Name))...)
		case port.Number != 0:
			errs = append(errs, validatePortNum(port.Number, p.Child("service", "port", "number"))...)
		default:
			errs = append(errs, field.Required(p.Child("service", "port"), "port name or number is required"))
		}
	case b.Resource == nil:
		errs = append(errs, field.Invalid(p, "", "resource or service backend is required"))
	}
	return errs
}

func ingressRow(ing *networkingv1.Ingress) []interface{} {
	class := "<none>"
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}
	var hosts []string
	for _, r := range ing.Spec.Rules {
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	hostStr := "*"
	switch {
	case len(ing.Spec.Rules) > 3 && len(hosts) > 0:
		hostStr = fmt.Sprintf("%s + %d more...", strings.Join(hosts[:min(3, len(hosts))], ","), len(ing.Spec.Rules)-3)
	case len(hosts) > 0:
		hostStr = strings.Join(hosts, ",")
	}
	addrs := sets.New[string]()
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		if lb.IP != "" {
			addrs.Insert(lb.IP)
		} else if lb.Hostname != "" {
			addrs.Insert(lb.Hostname)
		}
	}
	ports := "80"
	if len(ing.Spec.TLS) != 0 {
		ports = "80, 443"
	}
	return []interface{}{class, hostStr, strings.Join(sets.List(addrs), ","), ports, age(ing)}
}

func pdbRules() rules {
	return rules{
		generation: true,
		validate: func(obj runtime.Object) field.ErrorList {
			s := obj.(*policyv1.PodDisruptionBudget).Spec
			spec := field.NewPath("spec")
			var errs field.ErrorList
			if s.MinAvailable != nil && s.MaxUnavailable != nil {
				errs = append(errs, field.Invalid(spec, s, "minAvailable and maxUnavailable cannot be both set"))
			}
			if s.MinAvailable != nil {
				errs = append(errs, validatePositiveIntOrPercent(*s.MinAvailable, spec.Child("minAvailable"))...)
				errs = append(errs, notMoreThan100Percent(*s.MinAvailable, spec.Child("minAvailable"))...)
			}
			if s.MaxUnavailable != nil {
				errs = append(errs, validatePositiveIntOrPercent(*s.MaxUnavailable, spec.Child("maxUnavailable"))...)
				errs = append(errs, notMoreThan100Percent(*s.MaxUnavailable, spec.Child("maxUnavailable"))...)
			}
			if s.Selector != nil {
				errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
			}
			if p := s.UnhealthyPodEvictionPolicy; p != nil {
				errs = append(errs, oneOf(*p, spec.Child("unhealthyPodEvictionPolicy"), policyv1.IfHealthyBudget, policyv1.AlwaysAllow)...)
			}
			return errs
		},
		validateStatus: func(obj, _ runtime.Object) field.ErrorList {
			st := obj.(*policyv1.PodDisruptionBudget).Status
			p := field.NewPath("status")
			errs := nonNegative(int64(st.DisruptionsAllowed), p.Child("disruptionsAllowed"))
			errs = append(errs, nonNegative(int64(st.CurrentHealthy), p.Child("currentHealthy"))...)
			errs = append(errs, nonNegative(int64(st.DesiredHealthy), p.Child("desiredHealthy"))...)
			return append(errs, nonNegative(int64(st.ExpectedPods), p.Child("expectedPods"))...)
		},
		columns: []metav1.TableColumnDefinition{
			col("Min Available", "string", 0, "The minimum number of pods that must be available."),
			col("Max Unavailable", "string", 0, "The maximum number of pods that may be unavailable."),
			col("Allowed Disruptions", "integer", 0, "Calculated number of pods that may be disrupted at this time."),
			ageColumn(),
		},
		row: func(obj runtime.Object) []interface{} {
			p := obj.(*policyv1.PodDisruptionBudget)
			minA, maxU := "N/A", "N/A"
			if p.Spec.MinAvailable != nil {
				minA = p.Spec.MinAvailable.String()
			}
			if p.Spec.MaxUnavailable != nil {
				maxU = p.Spec.MaxUnavailable.String()
			}
			return []interface{}{minA, maxU, int64(p.Status.DisruptionsAllowed), age(p)}
		},
	}
}

// highestUserDefinablePriority is scheduling.HighestUserDefinablePriority.
const highestUserDefinablePriority = 1000000000

func priorityClassRules() rules {
	return rules{
		generation: true,
		defaults: func(obj runtime.Object) {
			pc := obj.(*schedulingv1.PriorityClass)
			if pc.PreemptionPolicy == nil {
				pc.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
			}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			pc := obj.(*schedulingv1.PriorityClass)
			var errs field.ErrorList
			if strings.HasPrefix(pc.Name, "system-") && pc.Name != "system-cluster-critical" && pc.Name != "system-node-critical" {
				errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"), "priority class names with 'system-' prefix are reserved for system use only"))
			} else if !strings.HasPrefix(pc.Name, "system-") && pc.Value > highestUserDefinablePriority {
				errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", highestUserDefinablePriority)))
			}
			if p := pc.PreemptionPolicy; p != nil {
				errs = append(errs, oneOf(*p, field.NewPath("preemptionPolicy"), corev1.PreemptLowerPriority, corev1.PreemptNever)...)
			}
			return errs
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*schedulingv1.PriorityClass), old.(*schedulingv1.PriorityClass)
			errs := immutable(n.Value, o.Value, field.NewPath("value"))
			return append(errs, immutable(n.PreemptionPolicy, o.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
		},
		columns: []metav1.TableColumnDefinition{
			col("Value", "integer", 0, schedulingv1.PriorityClass{}.SwaggerDoc()["value"]),
			col("Global-Default", "boolean", 0, schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]),
			ageColumn(),
			col("PreemptionPolicy", "string", 0, schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]),
		},
		row: func(obj runtime.Object) []interface{} {
			pc := obj.(*schedulingv1.PriorityClass)
			pp := ""
			if pc.PreemptionPolicy != nil {
				pp = string(*pc.PreemptionPolicy)
			}
			return []interface{}{int64(pc.Value), pc.GlobalDefault, age(pc), pp}
		},
	}
}

// isDefaultStorageClassAnnotation marks the cluster's default StorageClass.
const isDefaultStorageClassAnnotation = "storageclass.kubernetes.io/is-default-class"

func storageClassRules() rules {
	return rules{
		defaults: func(obj runtime.Object) {
			sc := obj.(*storagev1.StorageClass)
			if sc.ReclaimPolicy == nil {
				sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
			}
			if sc.VolumeBindingMode == nil {
				sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
			}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			sc := obj.(*storagev1.StorageClass)
			var errs field.ErrorList
			if sc.Provisioner == "" {
				errs = append(errs, field.Required(field.NewPath("provisioner"), ""))
			} else {
				errs = append(errs, msgs(sc.Provisioner, field.NewPath("provisioner"), validation.IsQualifiedName(strings.ToLower(sc.Provisioner)))...)
			}
			if p := sc.ReclaimPolicy; p != nil {
				errs = append(errs, oneOf(*p, field.NewPath("reclaimPolicy"), corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain)...)
			}
			if m := sc.VolumeBindingMode; m != nil {
				errs = append(errs, oneOf(*m, field.NewPath("volumeBindingMode"), storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer)...)
			}
			return errs
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*storagev1.StorageClass), old.(*storagev1.StorageClass)
			var errs field.ErrorList
			for _, c := range []struct {
				name     string
				now, was interface{}
			}{{"parameters", n.Parameters, o.Parameters}, {"provisioner", n.Provisioner, o.Provisioner},
				{"reclaimPolicy", n.ReclaimPolicy, o.ReclaimPolicy}, {"volumeBindingMode", n.VolumeBindingMode, o.VolumeBindingMode}} {
				if !apiequality.Semantic.DeepEqual(c.now, c.was) {
					errs = append(errs, field.Forbidden(field.NewPath(c.name), "updates to "+c.name+" are forbidden."))
				}
			}
			return errs
		},
		ownColumns: true,
		columns: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
			col("Provisioner", "string", 0, storagev1.StorageClass{}.SwaggerDoc()["provisioner"]),
			col("ReclaimPolicy", "string", 0, storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]),
			col("VolumeBindingMode", "string", 0, storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]),
			col("AllowVolumeExpansion", "string", 0, storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]),
			ageColumn(),
		},
		row: func(obj runtime.Object) []interface{} {
			sc := obj.(*storagev1.StorageClass)
			name := sc.Name
			if sc.Annotations[isDefaultStorageClassAnnotation] == "true" {
				name += " (default)"
			}
			reclaim, binding := string(corev1.PersistentVolumeReclaimDelete), string(storagev1.VolumeBindingImmediate)
			if sc.ReclaimPolicy != nil {
				reclaim = string(*sc.ReclaimPolicy)
			}
			if sc.VolumeBindingMode != nil {
				binding = string(*sc.VolumeBindingMode)
			}
			return []interface{}{name, sc.Provisioner, reclaim, binding, ptr.Deref(sc.AllowVolumeExpansion, false), age(sc)}
		},
	}
}
