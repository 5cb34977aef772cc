package aggregator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Resolution errors, matching the availability reasons upstream uses.
var (
	ErrServiceNotFound   = errors.New("service not found")
	ErrMissingEndpoints  = errors.New("service has no ready endpoints")
	ErrServicePortAbsent = errors.New("service has no such port")
)

// EndpointResolver resolves a Service port to a ready endpoint from its
// EndpointSlices, which works without the node proxy (--disable-agent).
type EndpointResolver struct {
	Client kubernetes.Interface
}

// ResolveEndpoint implements ServiceResolver.
func (e EndpointResolver) ResolveEndpoint(ctx context.Context, ns, name string, port int32) (*url.URL, error) {
	svc, err := e.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s/%s: %w", ErrServiceNotFound, ns, name, err)
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		return nil, fmt.Errorf("%w: %s/%s port %d", ErrServicePortAbsent, ns, name, port)
	}
	slices, err := e.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return nil, fmt.Errorf("list endpointslices of %s/%s: %w", ns, name, err)
	}
	for _, s := range slices.Items {
		if addr, ok := readyAddress(s, sp.Name); ok {
			return &url.URL{Scheme: "https", Host: addr}, nil
		}
	}
	return nil, fmt.Errorf("%w: %s/%s", ErrMissingEndpoints, ns, name)
}

func readyAddress(s discoveryv1.EndpointSlice, portName string) (string, bool) {
	var port int32
	for _, p := range s.Ports {
		if p.Port != nil && (p.Name == nil && portName == "" || p.Name != nil && *p.Name == portName) {
			port = *p.Port
		}
	}
	if port == 0 {
		return "", false
	}
	for _, ep := range s.Endpoints {
		if (ep.Conditions.Ready == nil || *ep.Conditions.Ready) && len(ep.Addresses) > 0 {
			return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port))), true
		}
	}
	return "", false
}
