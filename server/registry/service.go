package registry

import (
	"fmt"
	"net"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func serviceRules(cfg Config) rules {
	return rules{
		nameFn:   apivalidation.NameIsDNSLabel,
		defaults: func(obj runtime.Object) { defaultService(obj.(*corev1.Service)) },
		prepareCreate: func(obj runtime.Object) {
			normalizeClusterIPs(obj.(*corev1.Service))
		},
		prepareUpdate: func(obj, old runtime.Object) {
			n, o := obj.(*corev1.Service), old.(*corev1.Service)
			normalizeClusterIPs(n)
			dropTypeDependentFields(n, o)
			patchAllocatedValues(n, o)
		},
		validate: func(obj runtime.Object) field.ErrorList { return validateService(obj.(*corev1.Service), cfg) },
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*corev1.Service), old.(*corev1.Service)
			return append(validateServiceUpdate(n, o), validateService(n, cfg)...)
		},
		columns: serviceColumns,
		row:     func(obj runtime.Object) []interface{} { return serviceRow(obj.(*corev1.Service)) },
		allocator: &serviceAllocator{
			ips:   newIPRange(cfg.ServiceCIDR),
			ports: portRange{base: cfg.NodePortRange.Base, size: cfg.NodePortRange.Size},
		},
	}
}

// defaultService is SetDefaults_Service plus the IP family defaults the
// service REST storage fills for a single-stack IPv4/IPv6 cluster.
func defaultService(svc *corev1.Service) {
	s := &svc.Spec
	if s.SessionAffinity == "" {
		s.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.SessionAffinity == corev1.ServiceAffinityNone {
		s.SessionAffinityConfig = nil
	}
	if s.SessionAffinity == corev1.ServiceAffinityClientIP &&
		(s.SessionAffinityConfig == nil || s.SessionAffinityConfig.ClientIP == nil || s.SessionAffinityConfig.ClientIP.TimeoutSeconds == nil) {
		s.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{
			TimeoutSeconds: ptr.To(corev1.DefaultClientIPServiceAffinitySeconds)}}
	}
	if s.Type == "" {
		s.Type = corev1.ServiceTypeClusterIP
	}
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	externallyAccessible := s.Type == corev1.ServiceTypeLoadBalancer || s.Type == corev1.ServiceTypeNodePort ||
		(s.Type == corev1.ServiceTypeClusterIP && len(s.ExternalIPs) > 0)
	if externallyAccessible && s.ExternalTrafficPolicy == "" {
		s.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if s.InternalTrafficPolicy == nil && s.Type != corev1.ServiceTypeExternalName {
		s.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if s.Type == corev1.ServiceTypeLoadBalancer && s.AllocateLoadBalancerNodePorts == nil {
		s.AllocateLoadBalancerNodePorts = ptr.To(true)
	}
	if s.Type == corev1.ServiceTypeLoadBalancer {
		for i, ing := range svc.Status.LoadBalancer.Ingress {
			if ing.IP != "" && ing.IPMode == nil {
				svc.Status.LoadBalancer.Ingress[i].IPMode = ptr.To(corev1.LoadBalancerIPModeVIP)
			}
		}
	}
}

// defaultServiceIPFamilies fills ipFamilies/ipFamilyPolicy for the cluster's
// single family (called by the allocator, which knows the family).
func defaultServiceIPFamilies(svc *corev1.Service, family corev1.IPFamily) {
	if !needsClusterIP(svc) {
		return
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{family}
	}
	if svc.Spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicySingleStack
		if svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.Selector) == 0 {
			policy = corev1.IPFamilyPolicyRequireDualStack
		}
		svc.Spec.IPFamilyPolicy = &policy
	}
}

func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName
}

// needsHealthCheckNodePort: LoadBalancer Services with externalTrafficPolicy Local.
func needsHealthCheckNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func needsNodePort(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// normalizeClusterIPs keeps clusterIP and clusterIPs[0] in sync (service strategy).
func normalizeClusterIPs(svc *corev1.Service) {
	s := &svc.Spec
	if s.ClusterIP != "" && len(s.ClusterIPs) == 0 {
		s.ClusterIPs = []string{s.ClusterIP}
	}
	if s.ClusterIP == "" && len(s.ClusterIPs) > 0 {
		s.ClusterIP = s.ClusterIPs[0]
	}
}

func nodePortSet(svc *corev1.Service) sets.Set[int32] {
	out := sets.New[int32]()
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			out.Insert(p.NodePort)
		}
	}
	return out
}

// dropTypeDependentFields wipes values a type change made meaningless, when
// the client did not also change them (as the upstream service strategy does).
func dropTypeDependentFields(n, o *corev1.Service) {
	if needsClusterIP(o) && !needsClusterIP(n) {
		if n.Spec.ClusterIP == o.Spec.ClusterIP && apiequality.Semantic.DeepEqual(n.Spec.ClusterIPs, o.Spec.ClusterIPs) {
			n.Spec.ClusterIP, n.Spec.ClusterIPs = "", nil
		}
		if apiequality.Semantic.DeepEqual(n.Spec.IPFamilies, o.Spec.IPFamilies) {
			n.Spec.IPFamilies = nil
		}
		if apiequality.Semantic.DeepEqual(n.Spec.IPFamilyPolicy, o.Spec.IPFamilyPolicy) {
			n.Spec.IPFamilyPolicy = nil
		}
		if apiequality.Semantic.DeepEqual(n.Spec.InternalTrafficPolicy, o.Spec.InternalTrafficPolicy) {
			n.Spec.InternalTrafficPolicy = nil
		}
	}
	if needsNodePort(o) && !needsNodePort(n) && nodePortSet(n).Equal(nodePortSet(o)) {
		for i := range n.Spec.Ports {
			n.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheckNodePort(o) && !needsHealthCheckNodePort(n) && n.Spec.HealthCheckNodePort == o.Spec.HealthCheckNodePort {
		n.Spec.HealthCheckNodePort = 0
	}
	if o.Spec.Type == corev1.ServiceTypeLoadBalancer && n.Spec.Type != corev1.ServiceTypeLoadBalancer &&
		apiequality.Semantic.DeepEqual(n.Spec.AllocateLoadBalancerNodePorts, o.Spec.AllocateLoadBalancerNodePorts) {
		n.Spec.AllocateLoadBalancerNodePorts = nil
	}
	if !(n.Spec.Type == corev1.ServiceTypeLoadBalancer || n.Spec.Type == corev1.ServiceTypeNodePort || len(n.Spec.ExternalIPs) > 0) &&
		n.Spec.ExternalTrafficPolicy == o.Spec.ExternalTrafficPolicy {
		n.Spec.ExternalTrafficPolicy = ""
	}
}

// patchAllocatedValues carries allocated clusterIPs and nodePorts over to an
// update that omitted them (e.g. kubectl replace of a manifest), as upstream.
func patchAllocatedValues(n, o *corev1.Service) {
	if needsClusterIP(o) && needsClusterIP(n) {
		if n.Spec.ClusterIP == "" {
			n.Spec.ClusterIP = o.Spec.ClusterIP
		}
		if len(n.Spec.ClusterIPs) == 0 && len(o.Spec.ClusterIPs) > 0 {
			n.Spec.ClusterIPs = o.Spec.ClusterIPs
		}
		if len(n.Spec.IPFamilies) == 0 {
			n.Spec.IPFamilies = o.Spec.IPFamilies
		}
		if n.Spec.IPFamilyPolicy == nil {
			n.Spec.IPFamilyPolicy = o.Spec.IPFamilyPolicy
		}
	}
	if needsHealthCheckNodePort(o) && needsHealthCheckNodePort(n) && n.Spec.HealthCheckNodePort == 0 {
		n.Spec.HealthCheckNodePort = o.Spec.HealthCheckNodePort
	}
	if needsNodePort(o) && needsNodePort(n) {
		used := nodePortSet(o).Intersection(nodePortSet(n))
		byName := map[string]int32{}
		for _, p := range o.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range n.Spec.Ports {
			p := &n.Spec.Ports[i]
			if p.NodePort != 0 {
				continue
			}
			if np, ok := byName[p.Name]; ok && np != 0 && !used.Has(np) {
				p.NodePort = np
				used.Insert(np)
			}
		}
	}
}

func validateService(svc *corev1.Service, cfg Config) field.ErrorList {
	spec := field.NewPath("spec")
	s := &svc.Spec
	headless := s.ClusterIP == corev1.ClusterIPNone
	var errs field.ErrorList
	errs = append(errs, oneOf(s.Type, spec.Child("type"), corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort)...)
	if len(s.Ports) == 0 && !headless && s.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	errs = append(errs, validateServiceTypeFields(svc, spec)...)
	errs = append(errs, validateServicePorts(svc, cfg, spec.Child("ports"))...)
	if s.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabels(s.Selector, spec.Child("selector"))...)
	}
	errs = append(errs, oneOf(s.SessionAffinity, spec.Child("sessionAffinity"), corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)...)
	if s.SessionAffinity == corev1.ServiceAffinityNone && s.SessionAffinityConfig != nil {
		errs = append(errs, field.Forbidden(spec.Child("sessionAffinityConfig"), "must not be set when session affinity is None"))
	}
	errs = append(errs, validateClusterIPs(svc, spec)...)
	for i, ip := range s.ExternalIPs {
		if net.ParseIP(ip) == nil {
			errs = append(errs, field.Invalid(spec.Child("externalIPs").Index(i), ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
		}
	}
	externallyAccessible := s.Type == corev1.ServiceTypeLoadBalancer || s.Type == corev1.ServiceTypeNodePort ||
		(s.Type == corev1.ServiceTypeClusterIP && len(s.ExternalIPs) > 0)
	if s.ExternalTrafficPolicy != "" && !externallyAccessible {
		errs = append(errs, field.Invalid(spec.Child("externalTrafficPolicy"), s.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
	} else if s.ExternalTrafficPolicy != "" {
		errs = append(errs, oneOf(s.ExternalTrafficPolicy, spec.Child("externalTrafficPolicy"),
			corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)...)
	}
	if p := s.InternalTrafficPolicy; p != nil {
		errs = append(errs, oneOf(*p, spec.Child("internalTrafficPolicy"),
			corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)...)
	}
	if s.HealthCheckNodePort != 0 && !needsHealthCheckNodePort(svc) {
		errs = append(errs, field.Invalid(spec.Child("healthCheckNodePort"), s.HealthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
	}
	if s.AllocateLoadBalancerNodePorts != nil && s.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(spec.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	return errs
}

func validateServiceTypeFields(svc *corev1.Service, spec *field.Path) field.ErrorList {
	s := &svc.Spec
	headless := s.ClusterIP == corev1.ClusterIPNone
	var errs field.ErrorList
	switch s.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if headless {
			errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), s.ClusterIP,
				fmt.Sprintf("may not be set to 'None' for %s services", s.Type)))
		}
	case corev1.ServiceTypeExternalName:
		if len(s.ClusterIPs) > 0 || s.ClusterIP != "" {
			errs = append(errs, field.Forbidden(spec.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(s.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if s.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		if cname := strings.TrimSuffix(s.ExternalName, "."); cname != "" {
			errs = append(errs, dns1123Subdomain(cname, spec.Child("externalName"))...)
		} else {
			errs = append(errs, field.Required(spec.Child("externalName"), ""))
		}
	}
	return errs
}

func validateServicePorts(svc *corev1.Service, cfg Config, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	type pp struct {
		proto corev1.Protocol
		port  int32
	}
	seen, seenNode := map[pp]bool{}, map[pp]bool{}
	for i, sp := range svc.Spec.Ports {
		ip := p.Index(i)
		if len(svc.Spec.Ports) > 1 && sp.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else if sp.Name != "" {
			errs = append(errs, dns1123Label(sp.Name, ip.Child("name"))...)
			if names.Has(sp.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), sp.Name))
			}
			names.Insert(sp.Name)
		}
		errs = append(errs, validatePortNum(sp.Port, ip.Child("port"))...)
		errs = append(errs, oneOf(sp.Protocol, ip.Child("protocol"), corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP)...)
		errs = append(errs, validatePortOrName(sp.TargetPort.IntVal, sp.TargetPort.StrVal, ip.Child("targetPort"))...)
		if sp.AppProtocol != nil {
			errs = append(errs, msgs(*sp.AppProtocol, ip.Child("appProtocol"), validation.IsQualifiedName(*sp.AppProtocol))...)
		}
		if sp.NodePort != 0 {
			if svc.Spec.Type == corev1.ServiceTypeClusterIP {
				errs = append(errs, field.Forbidden(ip.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			} else if !cfg.NodePortRange.Contains(int(sp.NodePort)) {
				errs = append(errs, field.Invalid(ip.Child("nodePort"), sp.NodePort,
					fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", cfg.NodePortRange.String())))
			}
			k := pp{sp.Protocol, sp.NodePort}
			if seenNode[k] {
				errs = append(errs, field.Duplicate(ip.Child("nodePort"), sp.NodePort))
			}
			seenNode[k] = true
		}
		k := pp{sp.Protocol, sp.Port}
		if seen[k] {
			errs = append(errs, field.Duplicate(ip, corev1.ServicePort{Protocol: sp.Protocol, Port: sp.Port}))
		}
		seen[k] = true
	}
	return errs
}

func validateClusterIPs(svc *corev1.Service, spec *field.Path) field.ErrorList {
	s := &svc.Spec
	var errs field.ErrorList
	if len(s.ClusterIPs) > 0 && s.ClusterIP != s.ClusterIPs[0] {
		errs = append(errs, field.Invalid(spec.Child("clusterIPs"), s.ClusterIPs, "first value must match `clusterIP`"))
	}
	if len(s.ClusterIPs) > 1 {
		errs = append(errs, field.Invalid(spec.Child("clusterIPs"), s.ClusterIPs, "may contain at most one IP: this cluster is single-stack"))
	}
	if s.ClusterIP == "" || s.ClusterIP == corev1.ClusterIPNone {
		return errs
	}
	ip := net.ParseIP(s.ClusterIP)
	if ip == nil {
		return append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), s.ClusterIP, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) or 'None'"))
	}
	// Whether a ServiceCIDR holds the address is the allocator's check.
	for _, f := range s.IPFamilies {
		if f != corev1.IPv4Protocol && f != corev1.IPv6Protocol {
			errs = append(errs, field.NotSupported(spec.Child("ipFamilies"), f, []string{string(corev1.IPv4Protocol), string(corev1.IPv6Protocol)}))
		}
	}
	return errs
}

func validateServiceUpdate(n, o *corev1.Service) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if needsClusterIP(o) && needsClusterIP(n) && len(o.Spec.ClusterIPs) > 0 && len(n.Spec.ClusterIPs) > 0 &&
		n.Spec.ClusterIPs[0] != o.Spec.ClusterIPs[0] {
		errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), n.Spec.ClusterIPs[0], "may not change once set"))
	}
	if needsClusterIP(o) && needsClusterIP(n) && len(o.Spec.IPFamilies) > 0 && len(n.Spec.IPFamilies) > 0 &&
		n.Spec.IPFamilies[0] != o.Spec.IPFamilies[0] {
		errs = append(errs, field.Invalid(spec.Child("ipFamilies").Index(0), n.Spec.IPFamilies[0], "may not change once set"))
	}
	return errs
}

var serviceColumns = []metav1.TableColumnDefinition{
	col("Type", "string", 0, corev1.ServiceSpec{}.SwaggerDoc()["type"]),
	col("Cluster-IP", "string", 0, corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]),
	col("External-IP", "string", 0, corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]),
	col("Port(s)", "string", 0, corev1.ServiceSpec{}.SwaggerDoc()["ports"]),
	ageColumn(),
	col("Selector", "string", 1, corev1.ServiceSpec{}.SwaggerDoc()["selector"]),
}

func serviceRow(svc *corev1.Service) []interface{} {
	internal := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		internal = svc.Spec.ClusterIPs[0]
	}
	ports := make([]string, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	portStr := strings.Join(ports, ",")
	if portStr == "" {
		portStr = "<none>"
	}
	return []interface{}{string(svc.Spec.Type), internal, serviceExternalIP(svc), portStr, age(svc),
		labels.FormatLabels(svc.Spec.Selector)}
}

func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lb := loadBalancerIPs(svc.Status.LoadBalancer)
		all := append(lb, svc.Spec.ExternalIPs...)
		if len(all) > 0 {
			return strings.Join(all, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

func loadBalancerIPs(s corev1.LoadBalancerStatus) []string {
	set := sets.New[string]()
	for _, ing := range s.Ingress {
		if ing.IP != "" {
			set.Insert(ing.IP)
		} else if ing.Hostname != "" {
			set.Insert(ing.Hostname)
		}
	}
	out := sets.List(set)
	sort.Strings(out)
	return out
}
