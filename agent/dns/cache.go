package dns

import (
	"context"
	"errors"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// source is what the records are built from. Cache is the real one (over
// informers); tests feed it from client-go's fake clientset.
type source interface {
	service(ns, name string) *corev1.Service
	slicesOf(ns, svc string) []*discoveryv1.EndpointSlice
	servicesByIP(ip string) []*corev1.Service
	slicesByIP(ip string) []*discoveryv1.EndpointSlice
	hasNamespace(ns string) bool
}

var _ source = (*Cache)(nil)

const (
	byServiceIndex = "service" // slices: <ns>/<service name>
	byIPIndex      = "ip"      // services: ClusterIPs; slices: endpoint addresses
	byNSIndex      = "ns"      // services: namespace
	resync         = 0         // no periodic resync: events only
)

var errNotSynced = errors.New("informer stopped before its first list")

// Cache holds the Services and EndpointSlices of the cluster.
type Cache struct {
	factory  informers.SharedInformerFactory
	services cache.SharedIndexInformer
	slices   cache.SharedIndexInformer
}

// NewCache registers the informers; Start runs them. They come from
// shared when it is not nil (a view of the agent's factory), else from a
// factory of the cache's own that also drops annotations.
func NewCache(client kubernetes.Interface, shared informers.SharedInformerFactory) (*Cache, error) {
	f := shared
	if f == nil {
		f = informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithTransform(stripManagedFields))
	}
	c := &Cache{factory: f, services: f.Core().V1().Services().Informer(),
		slices: f.Discovery().V1().EndpointSlices().Informer()}
	if err := c.services.AddIndexers(cache.Indexers{byIPIndex: serviceIPs, byNSIndex: cache.MetaNamespaceIndexFunc}); err != nil {
		return nil, fmt.Errorf("dns cache: service indexers: %w", err)
	}
	if err := c.slices.AddIndexers(cache.Indexers{byServiceIndex: sliceService, byIPIndex: sliceIPs}); err != nil {
		return nil, fmt.Errorf("dns cache: endpointslice indexers: %w", err)
	}
	return c, nil
}

// Start runs the informers and waits for their first list.
func (c *Cache) Start(ctx context.Context) error {
	c.factory.StartWithContext(ctx)
	for typ, ok := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			if ctx.Err() != nil {
				return fmt.Errorf("dns cache: %v not synced: %w", typ, ctx.Err())
			}
			return fmt.Errorf("dns cache: %v not synced: %w", typ, errNotSynced)
		}
	}
	return nil
}

// Shutdown stops the informers (after the Start context ended).
func (c *Cache) Shutdown() { c.factory.Shutdown() }

// stripManagedFields keeps the cache small: the records never need them.
func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
		a.SetAnnotations(nil)
	}
	return obj, nil
}

func serviceIPs(obj any) ([]string, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, nil
	}
	var out []string
	for _, ip := range clusterIPs(svc) {
		out = append(out, ip.String())
	}
	return out, nil
}

func sliceService(obj any) ([]string, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok || s.Labels[discoveryv1.LabelServiceName] == "" {
		return nil, nil
	}
	return []string{s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]}, nil
}

func sliceIPs(obj any) ([]string, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	var out []string
	for _, ep := range s.Endpoints {
		for _, a := range ep.Addresses {
			if ip := net.ParseIP(a); ip != nil {
				out = append(out, ip.String())
			}
		}
	}
	return out, nil
}

func (c *Cache) service(ns, name string) *corev1.Service {
	obj, ok, err := c.services.GetIndexer().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	svc, _ := obj.(*corev1.Service)
	return svc
}

func (c *Cache) slicesOf(ns, svc string) []*discoveryv1.EndpointSlice {
	return toSlices(c.slices.GetIndexer().ByIndex(byServiceIndex, ns+"/"+svc))
}

func (c *Cache) slicesByIP(ip string) []*discoveryv1.EndpointSlice {
	return toSlices(c.slices.GetIndexer().ByIndex(byIPIndex, ip))
}

func (c *Cache) servicesByIP(ip string) []*corev1.Service {
	objs, _ := c.services.GetIndexer().ByIndex(byIPIndex, ip)
	var out []*corev1.Service
	for _, o := range objs {
		if svc, ok := o.(*corev1.Service); ok {
			out = append(out, svc)
		}
	}
	return out
}

func (c *Cache) hasNamespace(ns string) bool {
	keys, err := c.services.GetIndexer().IndexKeys(byNSIndex, ns)
	return err == nil && len(keys) > 0
}

func toSlices(objs []any, err error) []*discoveryv1.EndpointSlice {
	if err != nil {
		return nil
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			out = append(out, s)
		}
	}
	return out
}

// clusterIPs are the parsed ClusterIPs of svc (none when headless).
func clusterIPs(svc *corev1.Service) []net.IP {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	var out []net.IP
	for _, s := range ips {
		if ip := net.ParseIP(s); ip != nil {
			out = append(out, ip)
		}
	}
	return out
}
