package apiserver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// services/proxy and nodes/proxy, every method, as kube-apiserver's
// ProxyREST of services and nodes: a service request goes to one ready
// endpoint of the named (or numbered) port, picked at random; a node request
// goes to the node's agent API with the API server's kubelet-client
// credentials, or to another port of the node without them.

var (
	servicesGR = corev1.Resource("services")
	nodesGR    = corev1.Resource("nodes")
)

func (s *Server) handleServiceProxy(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	s.serveProxy(w, r, rc, s.locateService)
}

func (s *Server) handleNodeProxy(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	s.serveProxy(w, r, rc, s.locateNode)
}

// locateService is upstream's service ResourceLocation.
func (s *Server) locateService(ctx context.Context, rc *reqCtx) (*url.URL, http.RoundTripper, error) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(rc.name)
	if !ok {
		return nil, nil, badRequestf("invalid service request %q", rc.name)
	}
	if num, err := strconv.ParseInt(port, 10, 32); err == nil {
		if port, err = s.servicePortName(ctx, rc, name, int32(num)); err != nil {
			return nil, nil, err
		}
	}
	eps, err := s.storedEndpoints(ctx, rc.ns, name)
	if err != nil {
		return nil, nil, err
	}
	addr, p, ok := pickEndpoint(eps, port, func(a corev1.EndpointAddress) bool { return s.endpointIsPod(ctx, rc.ns, a) })
	if !ok {
		return nil, nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", rc.name))
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(addr, strconv.Itoa(int(p)))}, s.podProxy, nil
}

// servicePortName is the name of the service port numbered num.
func (s *Server) servicePortName(ctx context.Context, rc *reqCtx, name string, num int32) (string, error) {
	obj, _, err := s.getStored(ctx, rc.res, rc.ns, name)
	if err != nil {
		return "", err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return "", fmt.Errorf("services %s: stored object is %T", name, obj)
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Port == num {
			return sp.Name, nil
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", num, name))
}

func (s *Server) storedEndpoints(ctx context.Context, ns, name string) (*corev1.Endpoints, error) {
	res := s.byGVR[corev1.SchemeGroupVersion.WithResource("endpoints")]
	if res == nil {
		return nil, apierrors.NewServiceUnavailable("endpoints are not served by this server")
	}
	obj, _, err := s.getStored(ctx, res, ns, name)
	if err != nil {
		return nil, err
	}
	eps, ok := obj.(*corev1.Endpoints)
	if !ok {
		return nil, fmt.Errorf("endpoints %s: stored object is %T", name, obj)
	}
	return eps, nil
}

// pickEndpoint picks a ready address serving the endpoint port named port,
// starting from a random subset and address; valid filters addresses.
func pickEndpoint(eps *corev1.Endpoints, port string, valid func(corev1.EndpointAddress) bool) (string, int32, bool) {
	n := len(eps.Subsets)
	if n == 0 {
		return "", 0, false
	}
	seed := rand.IntN(n)
	for i := range n {
		ss := &eps.Subsets[(seed+i)%n]
		if len(ss.Addresses) == 0 {
			continue
		}
		for _, p := range ss.Ports {
			if p.Name != port {
				continue
			}
			aseed := rand.IntN(len(ss.Addresses))
			for try := range len(ss.Addresses) {
				a := ss.Addresses[(aseed+try)%len(ss.Addresses)]
				if valid(a) {
					return a.IP, p.Port, true
				}
			}
		}
	}
	return "", 0, false
}

// endpointIsPod is upstream's isValidAddress: an address that points at a
// pod must be one of that pod's IPs, so that an Endpoints object someone
// wrote by hand cannot aim the API server anywhere.
func (s *Server) endpointIsPod(ctx context.Context, ns string, a corev1.EndpointAddress) bool {
	if a.TargetRef == nil || a.TargetRef.Kind != "Pod" || a.TargetRef.Namespace != ns {
		return false
	}
	pods := s.byGVR[corev1.SchemeGroupVersion.WithResource("pods")]
	if pods == nil {
		return false
	}
	obj, _, err := s.getStored(ctx, pods, ns, a.TargetRef.Name)
	if err != nil {
		return false
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	for _, ip := range pod.Status.PodIPs {
		if ip.IP == a.IP {
			return true
		}
	}
	return pod.Status.PodIP == a.IP
}

// locateNode is upstream's node ResourceLocation: the agent API with the
// kubelet client when no other port is asked for.
func (s *Server) locateNode(ctx context.Context, rc *reqCtx) (*url.URL, http.RoundTripper, error) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(rc.name)
	if !ok {
		return nil, nil, badRequestf("invalid node request %q", rc.name)
	}
	obj, _, err := s.getStored(ctx, rc.res, "", name)
	if err != nil {
		return nil, nil, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, nil, fmt.Errorf("nodes %s: stored object is %T", name, obj)
	}
	base, err := kubeletURL(node)
	if err != nil {
		return nil, nil, err
	}
	if port == "" || port == base.Port() {
		if s.kubelet == nil {
			return nil, nil, apierrors.NewServiceUnavailable("this server has no kubelet client credentials")
		}
		return base, s.kubelet.transport, nil
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(base.Hostname(), port)}, s.podProxy, nil
}
