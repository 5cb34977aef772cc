package kit

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	"github.com/orch/orch/internal/cachetrim"
)

// filterKey names a filtered factory: its namespace and field selector.
type filterKey struct{ namespace, fieldSelector string }

// FilteredInformers is a factory of the term whose informers list and
// watch only namespace's objects ("" for all) that match fieldSelector
// (such as "metadata.name=kube-root-ca.crt" or
// "type=kubernetes.io/service-account-token"): for a controller that
// needs a few objects of a type whose whole set can be large, so that it
// does not hold every ConfigMap or Secret. Controllers asking for the
// same filter share the factory; it is not the shared cache (the garbage
// collector and Caches do not see it). Start starts its informers,
// Shutdown stops them.
func (c *Context) FilteredInformers(namespace, fieldSelector string) informers.SharedInformerFactory {
	k := filterKey{namespace, fieldSelector}
	if f, ok := c.filtered[k]; ok {
		return f
	}
	if c.filtered == nil {
		c.filtered = map[filterKey]informers.SharedInformerFactory{}
	}
	f := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, cachetrim.Option(), informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = fieldSelector }))
	c.filtered[k] = f
	return f
}
