package proxy

import (
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// servicePort is one port of a Service, the unit kube-proxy programs.
type servicePort struct {
	name       string // "ns/svc:port" (kube-proxy's ServicePortName; ":port" only when named)
	proto      string // tcp, udp or sctp
	clusterIP  string // empty for headless or non-IPv4
	port       int32
	nodePort   int32
	externalIP []string
	lbIPs      []string
	lbSources  []string // loadBalancerSourceRanges
	affinity   int32    // ClientIP affinity timeout in seconds; 0 = none
	extLocal   bool     // externalTrafficPolicy Local (and externally reachable)
	intLocal   bool     // internalTrafficPolicy Local
	endpoints  []endpoint
}

// endpoint is one IP:port backing a service port.
type endpoint struct {
	ip          string
	port        int32
	ready       bool
	serving     bool
	terminating bool
	local       bool
}

func (e endpoint) String() string { return net.JoinHostPort(e.ip, strconv.Itoa(int(e.port))) }

func (sp *servicePort) externallyReachable() bool {
	return sp.nodePort != 0 || len(sp.lbIPs) > 0 || len(sp.externalIP) > 0
}

// proxied says whether the proxy handles svc at all (kube-proxy skips
// headless and ExternalName services and ones claimed by another proxy).
func proxied(svc *corev1.Service) bool {
	if _, other := svc.Labels["service.kubernetes.io/service-proxy-name"]; other {
		return false
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return false
	}
	return ipv4(svc.Spec.ClusterIP) != ""
}

func ipv4(s string) string {
	ip := net.ParseIP(s)
	if ip == nil || ip.To4() == nil {
		return ""
	}
	return ip.String()
}

func ipv4s(in []string) []string {
	var out []string
	for _, s := range in {
		if ip := ipv4(s); ip != "" {
			out = append(out, ip)
		}
	}
	return out
}

// servicePorts turns a Service and its EndpointSlices into service ports,
// node being this node's name.
func servicePorts(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, node string) []*servicePort {
	if !proxied(svc) {
		return nil
	}
	var lbIPs []string
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if ip := ipv4(ing.IP); ip != "" {
				lbIPs = append(lbIPs, ip)
			}
		}
	}
	var affinity int32
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		affinity = corev1.DefaultClientIPServiceAffinitySeconds
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			affinity = *c.ClientIP.TimeoutSeconds
		}
	}
	out := make([]*servicePort, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		sp := &servicePort{
			name: portName(svc.Namespace, svc.Name, p.Name), proto: strings.ToLower(string(p.Protocol)),
			clusterIP: ipv4(svc.Spec.ClusterIP), port: p.Port, nodePort: p.NodePort,
			externalIP: ipv4s(svc.Spec.ExternalIPs), lbIPs: lbIPs, lbSources: svc.Spec.LoadBalancerSourceRanges,
			affinity: affinity,
			intLocal: svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal,
		}
		if sp.proto == "" {
			sp.proto = "tcp"
		}
		if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			sp.nodePort = 0
		}
		sp.extLocal = sp.externallyReachable() && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
		sp.endpoints = sliceEndpoints(slices, p, node)
		out = append(out, sp)
	}
	return out
}

func portName(ns, name, port string) string {
	s := ns + "/" + name
	if port != "" {
		s += ":" + port
	}
	return s
}

// sliceEndpoints collects the IPv4 endpoints of the slices' port matching
// p (by name and protocol), deduplicated and sorted by IP:port.
func sliceEndpoints(slices []*discoveryv1.EndpointSlice, p corev1.ServicePort, node string) []endpoint {
	seen := map[string]bool{}
	var out []endpoint
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		port, ok := slicePort(s, p)
		if !ok {
			continue
		}
		for _, e := range s.Endpoints {
			if len(e.Addresses) == 0 || ipv4(e.Addresses[0]) == "" {
				continue
			}
			ep := endpoint{ip: ipv4(e.Addresses[0]), port: port,
				ready:       e.Conditions.Ready == nil || *e.Conditions.Ready,
				terminating: e.Conditions.Terminating != nil && *e.Conditions.Terminating,
				local:       e.NodeName != nil && *e.NodeName == node}
			ep.serving = ep.ready
			if e.Conditions.Serving != nil {
				ep.serving = *e.Conditions.Serving
			}
			if k := ep.String(); !seen[k] {
				seen[k] = true
				out = append(out, ep)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func slicePort(s *discoveryv1.EndpointSlice, p corev1.ServicePort) (int32, bool) {
	proto := p.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	for _, sp := range s.Ports {
		name, sproto := "", corev1.ProtocolTCP
		if sp.Name != nil {
			name = *sp.Name
		}
		if sp.Protocol != nil {
			sproto = *sp.Protocol
		}
		if name == p.Name && sproto == proto && sp.Port != nil {
			return *sp.Port, true
		}
	}
	return 0, false
}

// categorize picks the endpoints to use, as kube-proxy's
// CategorizeEndpoints (without topology hints): cluster endpoints are the
// ready ones, else the serving terminating ones; local endpoints likewise
// among those on this node.
func categorize(sp *servicePort) (cluster, local []endpoint) {
	// With externalTrafficPolicy Local, pod and node traffic to external
	// addresses still short-circuits to the cluster endpoints.
	if !sp.intLocal || sp.externallyReachable() {
		cluster = pick(sp.endpoints, false)
	}
	usesLocal := sp.intLocal || sp.extLocal
	if usesLocal {
		local = pick(sp.endpoints, true)
	}
	return cluster, local
}

func pick(eps []endpoint, onlyLocal bool) []endpoint {
	var ready, fallback []endpoint
	for _, e := range eps {
		if onlyLocal && !e.local {
			continue
		}
		switch {
		case e.ready:
			ready = append(ready, e)
		case e.serving && e.terminating:
			fallback = append(fallback, e)
		}
	}
	if len(ready) > 0 {
		return ready
	}
	return fallback
}
