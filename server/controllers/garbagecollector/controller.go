package garbagecollector

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// Queue key prefixes: a dependent whose owners must be checked, and an owner
// whose orphan or foregroundDeletion finalizer must be processed.
const (
	keyDependent = "dep/"
	keyOwner     = "own/"
)

const workers = 2

// ignored are resources the collector does not watch (as upstream: events).
var ignored = map[schema.GroupResource]bool{
	{Group: "", Resource: "events"}:              true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// resource is a served resource the collector can address.
type resource struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
}

// Controller is the garbage collector.
type Controller struct {
	kc     *kit.Context
	client kubernetes.Interface
	log    *zap.Logger
	queue  kit.Queue
	graph  *graph
	// preSynced are the handlers added before the shared cache started
	// (watchCached), which share their informers' listeners.
	preSynced []cache.InformerSynced
	// running: Run has begun, so informerFor may make metadata informers
	// (before, in watchCached, it takes only the typed ones).
	running bool
	watched map[schema.GroupVersionResource]bool // only Run's goroutines touch it, one at a time
	kindsMu sync.RWMutex
	kinds   map[schema.GroupKind]resource
}

// New builds the collector; its informers are chosen from discovery, for
// the resources the other controllers cache just before the shared cache
// starts (watchCached), for the others in Run.
func New(kc *kit.Context) (*Controller, error) {
	c := &Controller{kc: kc, client: kc.Client, log: kc.Logger.Named("garbage-collector"),
		queue: kc.NewQueue("garbage-collector"), graph: newGraph(), kinds: map[schema.GroupKind]resource{},
		watched: map[schema.GroupVersionResource]bool{}}
	kc.BeforeStart(c.watchCached)
	return c, nil
}

// watchCached adds the graph handler to the shared informers of the
// resources the other controllers cache before those informers run, so
// that it shares their listeners. Discovery failing here is left to Run.
func (c *Controller) watchCached(context.Context) {
	if c.kc.Metadata == nil {
		return
	}
	res, err := c.discover()
	if err != nil {
		c.log.Debug("discovery before the cache starts failed; watching from Run", zap.Error(err))
		return
	}
	var cached []resource
	for _, r := range res {
		if c.cached(r) {
			cached = append(cached, r)
		}
	}
	// c.running is false yet, so informerFor takes the shared informers.
	synced, err := c.watch(cached)
	if err != nil {
		c.log.Debug("watching the cached resources before the cache starts failed; watching from Run", zap.Error(err))
	}
	c.preSynced = synced
}

// cached reports whether the other controllers cache r.
func (c *Controller) cached(r resource) bool {
	return c.kc.Caches(r.gvr, typeOf(r.gvr.GroupVersion().WithKind(r.kind)))
}

// Run discovers the served resources, watches them through the shared cache
// (metadata-only informers for resources without a typed one, such as
// custom resources) and collects garbage until ctx ends. Discovery is
// repeated every 30 s, as upstream's collector does, so resources of CRDs
// created later are watched too.
func (c *Controller) Run(ctx context.Context) error {
	res, err := c.discoverRetrying(ctx)
	if err != nil {
		return err
	}
	c.running = true
	synced, err := c.watch(res)
	if err != nil {
		return err
	}
	synced = append(synced, c.preSynced...)
	c.kc.Informers.StartWithContext(ctx)
	c.kc.StartMetadata(ctx)
	if !kit.WaitForSync(ctx, synced...) {
		return ctx.Err()
	}
	c.log.Info("garbage collector watching", zap.Int("resources", len(synced)))
	go c.rediscover(ctx)
	kit.RunWorkers(ctx, c.queue, workers, c.sync, c.log)
	return nil
}

// watch registers an informer and the graph handler for each new resource.
func (c *Controller) watch(res []resource) ([]cache.InformerSynced, error) {
	var synced []cache.InformerSynced
	for _, r := range res {
		if c.watched[r.gvr] {
			continue
		}
		inf, err := c.informerFor(r)
		if err != nil {
			c.log.Debug("resource has no informer; not collected", zap.Stringer("resource", r.gvr))
			continue
		}
		if _, err := inf.AddEventHandler(c.handler(r.gvr)); err != nil {
			return nil, err
		}
		c.watched[r.gvr] = true
		synced = append(synced, inf.HasSynced)
	}
	return synced, nil
}

// informerFor shares the typed informer of a resource the other
// controllers already cache; every other resource gets a metadata-only
// informer (without managedFields): the collector reads nothing but
// metadata, and a typed informer started for it alone would keep whole
// objects (ConfigMaps, Secrets, RBAC rules...) in memory.
func (c *Controller) informerFor(r resource) (cache.SharedIndexInformer, error) {
	var gi informers.GenericInformer
	var err error
	if c.running {
		gi, err = c.kc.CachedOrMetadataInformer(r.gvr, typeOf(r.gvr.GroupVersion().WithKind(r.kind)))
	} else {
		gi, err = c.kc.Informers.ForResource(r.gvr) // watchCached: the shared informers only
	}
	if err != nil {
		return nil, fmt.Errorf("no informer for %s: %w", r.gvr, err)
	}
	return gi.Informer(), nil
}

// typeOf is the Go type of gvk's typed object (nil when not built in).
func typeOf(gvk schema.GroupVersionKind) reflect.Type {
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil
	}
	return reflect.TypeOf(obj)
}

// rediscover adds the resources that appeared since (custom resources).
func (c *Controller) rediscover(ctx context.Context) {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res, err := c.discover()
		if err != nil {
			continue
		}
		if synced, err := c.watch(res); err == nil && len(synced) > 0 {
			c.kc.StartMetadata(ctx)
			c.log.Info("garbage collector watching new resources", zap.Int("resources", len(synced)))
		}
	}
}

// discoverRetrying retries discovery with back-off (1s..30s) until it works or ctx ends.
func (c *Controller) discoverRetrying(ctx context.Context) ([]resource, error) {
	wait := time.Second
	for {
		res, err := c.discover()
		if err == nil {
			return res, nil
		}
		c.log.Warn("discovering resources; retrying", zap.Error(err), zap.Duration("in", wait))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// discover lists the served resources that can be listed, watched and deleted.
func (c *Controller) discover() ([]resource, error) {
	lists, err := c.client.Discovery().ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discover resources: %w", err)
	}
	var out []resource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || ignored[gv.WithResource(r.Name).GroupResource()] ||
				!slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			res := resource{gvr: gv.WithResource(r.Name), kind: r.Kind, namespaced: r.Namespaced}
			c.kindsMu.Lock()
			c.kinds[gv.WithKind(r.Kind).GroupKind()] = res
			c.kindsMu.Unlock()
			out = append(out, res)
		}
	}
	return out, nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	if uid, ok := strings.CutPrefix(key, keyOwner); ok {
		return c.processOwner(ctx, types.UID(uid))
	}
	if uid, ok := strings.CutPrefix(key, keyDependent); ok {
		return c.processDependent(ctx, types.UID(uid))
	}
	return nil
}

func (c *Controller) handler(gvr schema.GroupVersionResource) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(gvr, obj) },
		UpdateFunc: func(_, obj any) { c.observe(gvr, obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if m, err := meta.Accessor(obj); err == nil {
				c.gone(m.GetUID())
			}
		},
	}
}

// observe records an added or updated object and enqueues what it affects.
func (c *Controller) observe(gvr schema.GroupVersionResource, obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	n := &node{res: gvr, namespace: m.GetNamespace(), name: m.GetName(), uid: m.GetUID(),
		owners: m.GetOwnerReferences(), finalizers: m.GetFinalizers(), deleting: m.GetDeletionTimestamp() != nil}
	for _, o := range c.graph.upsert(n) {
		c.queue.Add(keyOwner + string(o)) // a blocker may be gone
	}
	if n.deleting && (n.has(metav1.FinalizerOrphanDependents) || n.has(metav1.FinalizerDeleteDependents)) {
		c.queue.Add(keyOwner + string(n.uid))
	}
	for _, o := range n.owners {
		owner, known := c.graph.get(o.UID)
		if !known || (owner.deleting && owner.has(metav1.FinalizerDeleteDependents)) {
			c.queue.Add(keyDependent + string(n.uid))
		}
		if known && owner.deleting {
			c.queue.Add(keyOwner + string(o.UID))
		}
	}
}

// gone forgets a deleted object and enqueues its dependents and owners.
func (c *Controller) gone(uid types.UID) {
	n := c.graph.remove(uid)
	for _, d := range c.graph.dependentsOf(uid) {
		c.queue.Add(keyDependent + string(d.uid))
	}
	if n != nil {
		for _, o := range n.owners {
			c.queue.Add(keyOwner + string(o.UID))
		}
	}
}
