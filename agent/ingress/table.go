package ingress

import (
	"crypto/tls"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// ClassName is the IngressClass orch serves, ControllerName its controller.
const (
	ClassName      = "orch"
	ControllerName = "orch.io/ingress"
	// DefaultClassAnnotation marks the cluster's default IngressClass.
	DefaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class"
)

// Inputs are what a Table is built from.
type Inputs struct {
	Ingresses []*networkingv1.Ingress
	Services  []*corev1.Service
	Slices    []*discoveryv1.EndpointSlice
	// Certs are the parsed TLS Secrets by "namespace/name" (ParseTLSSecret).
	Certs map[string]*tls.Certificate
	// DefaultClass: Ingresses without spec.ingressClassName are served too
	// (the IngressClass "orch" is the cluster's default).
	DefaultClass bool
}

// Backend is a Service port with its ready endpoint addresses (host:port).
type Backend struct {
	Name  string // namespace/service:port, for logs and errors
	Addrs []string
	next  atomic.Uint32
}

// Pick returns the next address, round-robin; "" when there is none.
func (b *Backend) Pick() string {
	if len(b.Addrs) == 0 {
		return ""
	}
	return b.Addrs[int(b.next.Add(1)-1)%len(b.Addrs)]
}

// route is one path of a rule.
type route struct {
	path    string // Exact: the path; Prefix: without its trailing slash
	exact   bool
	backend *Backend
}

// hostRoutes are the paths of one host, Exact ones first, then prefixes
// longest first; equal entries keep the order of the oldest Ingress.
type hostRoutes []route

// Table routes requests by host and path. It is immutable once built.
type Table struct {
	exact    map[string]hostRoutes // "foo.example.com"
	wildcard map[string]hostRoutes // "example.com" for "*.example.com"
	anyHost  hostRoutes
	fallback *Backend // the oldest Ingress's spec.defaultBackend
	certs    *certSet
}

// Served reports whether the Ingress is of class orch.
func Served(ing *networkingv1.Ingress, defaultClass bool) bool {
	if c := ing.Spec.IngressClassName; c != nil {
		return *c == ClassName
	}
	if c, ok := ing.Annotations["kubernetes.io/ingress.class"]; ok {
		return c == ClassName
	}
	return defaultClass
}

// Build makes a Table of the served Ingresses in in.
func Build(in Inputs) *Table {
	ings := make([]*networkingv1.Ingress, 0, len(in.Ingresses))
	for _, ing := range in.Ingresses {
		if ing.DeletionTimestamp == nil && Served(ing, in.DefaultClass) {
			ings = append(ings, ing)
		}
	}
	sort.SliceStable(ings, func(i, j int) bool { return older(ings[i], ings[j]) })
	r := newResolver(in.Services, in.Slices)
	t := &Table{exact: map[string]hostRoutes{}, wildcard: map[string]hostRoutes{}, certs: buildCerts(ings, in.Certs)}
	for _, ing := range ings {
		if b := ing.Spec.DefaultBackend; b != nil && t.fallback == nil {
			t.fallback = r.backend(ing.Namespace, b)
		}
		for _, rule := range ing.Spec.Rules {
			if rule.HTTP == nil {
				continue
			}
			var routes []route
			for _, p := range rule.HTTP.Paths {
				routes = append(routes, newRoute(p, r.backend(ing.Namespace, &p.Backend)))
			}
			switch h := strings.ToLower(rule.Host); {
			case h == "":
				t.anyHost = append(t.anyHost, routes...)
			case strings.HasPrefix(h, "*."):
				t.wildcard[h[2:]] = append(t.wildcard[h[2:]], routes...)
			default:
				t.exact[h] = append(t.exact[h], routes...)
			}
		}
	}
	for _, m := range []map[string]hostRoutes{t.exact, t.wildcard} {
		for h, rs := range m {
			m[h] = sortRoutes(rs)
		}
	}
	t.anyHost = sortRoutes(t.anyHost)
	return t
}

// older orders Ingresses by creation, then namespace/name.
func older(a, b *networkingv1.Ingress) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

func newRoute(p networkingv1.HTTPIngressPath, b *Backend) route {
	path := p.Path
	if path == "" {
		path = "/"
	}
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		return route{path: path, exact: true, backend: b}
	}
	// Prefix and ImplementationSpecific: element-wise prefix.
	return route{path: strings.TrimRight(path, "/"), backend: b}
}

// sortRoutes puts Exact paths first, then prefixes longest first, keeping
// the Ingresses' age order among equal paths.
func sortRoutes(rs hostRoutes) hostRoutes {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].exact != rs[j].exact {
			return rs[i].exact
		}
		return len(rs[i].path) > len(rs[j].path)
	})
	return rs
}

// match returns the backend of the first route that matches path.
func (rs hostRoutes) match(path string) (*Backend, bool) {
	for _, r := range rs {
		if r.exact {
			if path == r.path {
				return r.backend, true
			}
			continue
		}
		if r.path == "" || path == r.path || strings.HasPrefix(path, r.path+"/") {
			return r.backend, true
		}
	}
	return nil, false
}

// Route finds the backend of a request: the rules of the exact host, then
// of the matching wildcard host, then the rules without a host, then the
// default backend. ok is false when nothing matches (404); a matched
// backend may still have no address (503).
func (t *Table) Route(host, path string) (b *Backend, ok bool) {
	host = strings.ToLower(stripPort(host))
	if rs, found := t.exact[host]; found {
		if b, ok := rs.match(path); ok {
			return b, true
		}
	}
	if i := strings.IndexByte(host, '.'); i > 0 {
		if rs, found := t.wildcard[host[i+1:]]; found {
			if b, ok := rs.match(path); ok {
				return b, true
			}
		}
	}
	if b, ok := t.anyHost.match(path); ok {
		return b, true
	}
	return t.fallback, t.fallback != nil
}

// stripPort drops a :port (and the brackets of an IPv6 literal).
func stripPort(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// resolver finds the ready endpoints of Service ports.
type resolver struct {
	services map[string]*corev1.Service
	slices   map[string][]*discoveryv1.EndpointSlice // by namespace/service
	built    map[string]*Backend
}

func newResolver(svcs []*corev1.Service, slices []*discoveryv1.EndpointSlice) *resolver {
	r := &resolver{services: map[string]*corev1.Service{}, slices: map[string][]*discoveryv1.EndpointSlice{},
		built: map[string]*Backend{}}
	for _, s := range svcs {
		r.services[s.Namespace+"/"+s.Name] = s
	}
	for _, s := range slices {
		if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
			r.slices[s.Namespace+"/"+name] = append(r.slices[s.Namespace+"/"+name], s)
		}
	}
	return r
}

// backend resolves an Ingress backend; a resource backend, a missing
// Service or port gives a Backend without addresses (503).
func (r *resolver) backend(ns string, b *networkingv1.IngressBackend) *Backend {
	if b.Service == nil {
		return &Backend{Name: ns + "/<resource backend>"}
	}
	key := ns + "/" + b.Service.Name
	port := b.Service.Port.Name
	if port == "" {
		port = strconv.Itoa(int(b.Service.Port.Number))
	}
	name := key + ":" + port
	if be, ok := r.built[name]; ok {
		return be
	}
	be := &Backend{Name: name}
	r.built[name] = be
	if svc, ok := r.services[key]; ok {
		if sp, ok := servicePort(svc, b.Service.Port); ok {
			be.Addrs = r.addrs(key, sp.Name)
		}
	}
	return be
}

func servicePort(svc *corev1.Service, p networkingv1.ServiceBackendPort) (corev1.ServicePort, bool) {
	for _, sp := range svc.Spec.Ports {
		if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
			continue
		}
		if (p.Name != "" && sp.Name == p.Name) || (p.Name == "" && sp.Port == p.Number) {
			return sp, true
		}
	}
	return corev1.ServicePort{}, false
}

// addrs are the ready addresses of the Service's port (by its name), or
// the serving terminating ones when none is ready, sorted.
func (r *resolver) addrs(key, portName string) []string {
	var ready, serving []string
	for _, s := range r.slices[key] {
		port, ok := slicePort(s, portName)
		if !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			c := ep.Conditions
			for _, a := range ep.Addresses {
				hp := net.JoinHostPort(a, strconv.Itoa(int(port)))
				switch {
				case c.Ready == nil || *c.Ready:
					ready = append(ready, hp)
				case c.Serving != nil && *c.Serving:
					serving = append(serving, hp)
				}
			}
		}
	}
	if len(ready) == 0 {
		ready = serving
	}
	sort.Strings(ready)
	return ready
}

func slicePort(s *discoveryv1.EndpointSlice, name string) (int32, bool) {
	for _, p := range s.Ports {
		n := ""
		if p.Name != nil {
			n = *p.Name
		}
		if n == name && p.Port != nil && (p.Protocol == nil || *p.Protocol == corev1.ProtocolTCP) {
			return *p.Port, true
		}
	}
	return 0, false
}
