package kit

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/internal/cachetrim"
)

// metaInformers are a term's metadata-only informers, one per resource,
// made on first ask and run with the term's context: the garbage
// collector's for resources no typed informer caches, and the quota
// controller's for resources it only counts, shared between them.
type metaInformers struct {
	mu      sync.Mutex
	infs    map[schema.GroupVersionResource]informers.GenericInformer
	pending []cache.SharedIndexInformer
	running sync.WaitGroup
}

// MetadataInformer is the term's metadata-only informer of gvr: its
// objects are *metav1.PartialObjectMetadata without managedFields, so a
// controller that reads only metadata (or only counts objects) does not
// hold whole ConfigMaps or Secrets. Informers asked for before Start run
// from Start, later ones from StartMetadata. It fails when the Context
// has no Metadata client.
func (c *Context) MetadataInformer(gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
	if c.Metadata == nil {
		return nil, fmt.Errorf("no metadata client for %s", gvr)
	}
	m := &c.meta
	m.mu.Lock()
	defer m.mu.Unlock()
	if gi, ok := m.infs[gvr]; ok {
		return gi, nil
	}
	if m.infs == nil {
		m.infs = map[schema.GroupVersionResource]informers.GenericInformer{}
	}
	gi := metadatainformer.NewFilteredMetadataInformer(c.Metadata, gvr, "", 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil)
	_ = gi.Informer().SetTransform(cachetrim.ManagedFields) // fails only once started: set at creation
	m.infs[gvr] = gi
	m.pending = append(m.pending, gi.Informer())
	return gi, nil
}

// StartMetadata runs the metadata informers made since the last start,
// each with ctx (a factory's Start takes a stop channel, and contexts
// derived from one cost a goroutine each). Shutdown waits for them.
func (c *Context) StartMetadata(ctx context.Context) {
	m := &c.meta
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, inf := range m.pending {
		m.running.Go(func() { inf.RunWithContext(ctx) })
	}
	m.pending = nil
}

// CachedOrMetadataInformer is the informer of gvr for a controller that
// reads only objects' metadata: the typed one when the controllers cache
// it anyway (typ is its object type, nil when not built in), else a
// metadata-only one (MetadataInformer); the typed one too when the Context
// has no Metadata client.
func (c *Context) CachedOrMetadataInformer(gvr schema.GroupVersionResource, typ reflect.Type) (informers.GenericInformer, error) {
	if c.Metadata == nil || c.Caches(gvr, typ) {
		return c.Informers.ForResource(gvr)
	}
	return c.MetadataInformer(gvr)
}
