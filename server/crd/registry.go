package crd

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/openapi"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/webhookclient"
)

// CRDs is the GroupVersionResource of CustomResourceDefinitions.
var CRDs = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// Registry holds the served custom resources; the API server looks
// resources up in it after its static ones. Safe for concurrent use.
type Registry struct {
	log    *zap.Logger
	mu     sync.RWMutex
	byGVR  map[schema.GroupVersionResource]*registry.Resource
	list   []*registry.Resource
	byGV   map[string]gvDoc // group/version → OpenAPI schemas and paths
	docs   []openapi.Doc    // rendered from byGV on first use
	v2     *openapi.V2Additions
	synced atomic.Bool
	// terminating is per CRD name, read by the resources' Terminating.
	terminating sync.Map
	// built caches each CRD's resources by name and resourceVersion: a
	// rebuild only converts the schemas of CRDs that changed.
	built map[string]builtCRD
	// hooks calls conversion webhooks.
	hooks *webhookclient.Client
}

type builtCRD struct {
	rv   string
	res  []*registry.Resource
	docs map[string]gvDoc // group/version → its part of the OpenAPI document
}

// NewRegistry returns an empty registry.
func NewRegistry(log *zap.Logger) *Registry {
	return &Registry{log: log.Named("crd"), byGVR: map[schema.GroupVersionResource]*registry.Resource{},
		hooks: &webhookclient.Client{}}
}

// SetResolver gives conversion webhooks by Service their resolver; call it
// before StartInformer.
func (r *Registry) SetResolver(res webhookclient.Resolver) { r.hooks.Resolver = res }

// Lookup returns the resource of gvr, or nil.
func (r *Registry) Lookup(gvr schema.GroupVersionResource) *registry.Resource {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byGVR[gvr]
}

// Resources returns every served custom resource.
func (r *Registry) Resources() []*registry.Resource {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.list
}

// OpenAPIV3 returns the v3 documents of the custom resource group versions.
func (r *Registry) OpenAPIV3() []openapi.Doc {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.docs == nil && len(r.byGV) > 0 {
		r.docs = buildDocs(r.byGV)
	}
	return r.docs
}

// OpenAPIV2 returns what the custom resources add to /openapi/v2 (nil
// without any).
func (r *Registry) OpenAPIV2() *openapi.V2Additions {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.v2 == nil && len(r.byGV) > 0 {
		r.v2 = buildV2(r.byGV)
	}
	return r.v2
}

// docsOf returns what c's served versions add to the OpenAPI documents.
func docsOf(c *apiextensionsv1.CustomResourceDefinition) map[string]gvDoc {
	out := map[string]gvDoc{}
	for _, v := range c.Spec.Versions {
		if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		d, err := versionDoc(c, v)
		if err != nil {
			continue
		}
		out[c.Spec.Group+"/"+v.Name] = d
	}
	return out
}

// Serves reports whether the registry serves the CRD name's resources
// (built from a version whose names were accepted): the controller sets
// Established only then, so a client that sees Established finds them.
func (r *Registry) Serves(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.built[name]
	return ok
}

// Synced reports whether the CRDs were loaded once.
func (r *Registry) Synced() bool { return r.synced.Load() }

// set rebuilds the registry from every CRD.
func (r *Registry) set(crds []*apiextensionsv1.CustomResourceDefinition) {
	byGVR := map[schema.GroupVersionResource]*registry.Resource{}
	var list []*registry.Resource
	built := map[string]builtCRD{}
	for _, c := range crds {
		if !IsEstablished(c) && condition(c, apiextensionsv1.NamesAccepted) != apiextensionsv1.ConditionTrue {
			continue // served once its names are accepted, as upstream's handler
		}
		name := c.Name
		r.terminating.Store(name, c.DeletionTimestamp != nil)
		b, ok := r.built[name]
		if !ok || b.rv != c.ResourceVersion {
			res, err := Resources(c, func() bool { v, _ := r.terminating.Load(name); return v == true }, r.hooks, r.log)
			if err != nil {
				r.log.Warn("not serving a custom resource", zap.String("crd", c.Name), zap.Error(err))
				continue
			}
			b = builtCRD{rv: c.ResourceVersion, res: res, docs: docsOf(c)}
		}
		built[name] = b
		for _, x := range b.res {
			byGVR[x.GroupVersion.WithResource(x.Resource)] = x
			list = append(list, x)
		}
	}
	byGV := map[string]gvDoc{}
	for _, b := range built {
		for gv, d := range b.docs {
			acc, ok := byGV[gv]
			if !ok {
				acc = gvDoc{schemas: map[string]any{}, paths: map[string]any{}, v2defs: map[string]any{}, v2paths: map[string]any{}}
			}
			maps.Copy(acc.schemas, d.schemas)
			maps.Copy(acc.paths, d.paths)
			maps.Copy(acc.v2defs, d.v2defs)
			maps.Copy(acc.v2paths, d.v2paths)
			byGV[gv] = acc
		}
	}
	r.mu.Lock()
	r.byGVR, r.list, r.built, r.byGV, r.docs, r.v2 = byGVR, list, built, byGV, nil, nil
	r.mu.Unlock()
}

// IsEstablished reports the Established condition.
func IsEstablished(c *apiextensionsv1.CustomResourceDefinition) bool {
	return condition(c, apiextensionsv1.Established) == apiextensionsv1.ConditionTrue
}

func condition(c *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) apiextensionsv1.ConditionStatus {
	for _, cond := range c.Status.Conditions {
		if cond.Type == t {
			return cond.Status
		}
	}
	return ""
}

// Informer watches CRDs through client (the loopback client); every change
// rebuilds reg and calls onChange (the leader's controller, if any).
type Informer struct {
	inf cache.SharedIndexInformer
}

// StartInformer starts the CRD informer feeding reg; stop ends it.
func StartInformer(client dynamic.Interface, reg *Registry, onChange func()) (inf *Informer, stop func()) {
	ri := client.Resource(CRDs)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, o)
		},
	}
	i := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	inf = &Informer{inf: i}
	rebuild := func() {
		reg.set(inf.List())
		if i.HasSynced() {
			reg.synced.Store(true)
		}
		if onChange != nil {
			onChange()
		}
	}
	_, _ = i.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { rebuild() }, UpdateFunc: func(_, _ any) { rebuild() }, DeleteFunc: func(any) { rebuild() },
	})
	ctx, cancel := context.WithCancel(context.Background())
	go i.RunWithContext(ctx)
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), i.HasSynced) {
			rebuild()
		}
	}()
	return inf, cancel
}

// List returns every CRD in the cache, typed.
func (inf *Informer) List() []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, o := range inf.inf.GetStore().List() {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.(*unstructured.Unstructured).Object, c); err == nil {
			out = append(out, c)
		}
	}
	return out
}
