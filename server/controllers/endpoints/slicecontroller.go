package endpoints

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// SliceController keeps the EndpointSlices of every Service.
type SliceController struct {
	*base
	client    kubernetes.Interface
	slices    discoverylisters.EndpointSliceLister
	endpoints corelisters.EndpointsLister
	extra     []cache.InformerSynced
	created   createdSlices
}

// NewSlices registers the informers and handlers on kc.
func NewSlices(kc *kit.Context) (*SliceController, error) {
	b, err := newBase(kc, "endpointslice")
	if err != nil {
		return nil, err
	}
	sl, eps := kc.Informers.Discovery().V1().EndpointSlices(), kc.Informers.Core().V1().Endpoints()
	c := &SliceController{base: b, client: kc.Client, slices: sl.Lister(), endpoints: eps.Lister(),
		extra: []cache.InformerSynced{sl.Informer().HasSynced, eps.Informer().HasSynced}}
	// Slices changed by others (or ours reaching the cache), and Endpoints
	// of selector-less Services.
	if _, err := sl.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueOwner(obj) },
		UpdateFunc: func(_, obj any) { c.enqueueOwner(obj) }, DeleteFunc: func(obj any) { c.enqueueOwner(obj) },
	}); err != nil {
		return nil, err
	}
	_, err = eps.Informer().AddEventHandler(kit.EnqueueHandler(c.queue))
	return c, err
}

func (c *SliceController) enqueueOwner(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if s, ok := obj.(*discoveryv1.EndpointSlice); ok && s.Labels[discoveryv1.LabelServiceName] != "" {
		c.queue.Add(s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName])
	}
}

// Run runs the workers until ctx ends.
func (c *SliceController) Run(ctx context.Context) error { return c.run(ctx, c.sync, c.extra...) }

func (c *SliceController) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // the slices are owned by the Service: the GC removes them
	}
	if err != nil {
		return err
	}
	managedBy, want, err := c.desired(svc)
	if err != nil {
		return err
	}
	existing, err := c.slices.EndpointSlices(ns).List(labels.SelectorFromSet(labels.Set{
		discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: managedBy}))
	if err != nil {
		return err
	}
	if c.created.pending(key, existing, time.Now()) {
		c.queue.AddAfter(key, 100*time.Millisecond) // the cache lags behind our own creates
		return nil
	}
	sort.Slice(existing, func(i, j int) bool { return existing[i].Name < existing[j].Name })
	return c.reconcile(ctx, svc, managedBy, want, existing)
}

// desired is what svc's slices should hold and who manages them.
func (c *SliceController) desired(svc *corev1.Service) (string, []desiredSlice, error) {
	if svc.Spec.Selector == nil {
		ep, err := c.endpoints.Endpoints(svc.Namespace).Get(svc.Name)
		if apierrors.IsNotFound(err) {
			return managedByMirroring, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if ep.Labels[discoveryv1.LabelSkipMirror] == "true" {
			// Its writer keeps its own slices (the kubernetes Service's).
			return managedByMirroring, nil, nil
		}
		return managedByMirroring, mirrorSlices(ep), nil
	}
	pods, err := c.selected(svc)
	if err != nil {
		return "", nil, err
	}
	return managedBySlices, slicesFor(svc, endpointsFor(svc, pods, true)), nil
}

// reconcile updates existing slices in place (in order), creates missing
// ones and deletes the rest. A Service with no endpoints keeps one empty
// slice, as upstream does, so watchers see it.
func (c *SliceController) reconcile(ctx context.Context, svc *corev1.Service, managedBy string, want []desiredSlice, existing []*discoveryv1.EndpointSlice) error {
	if len(want) == 0 && svc.Spec.Selector != nil {
		want = []desiredSlice{{}}
	}
	api := c.client.DiscoveryV1().EndpointSlices(svc.Namespace)
	for i, d := range want {
		if i < len(existing) {
			if err := c.update(ctx, existing[i], d); err != nil {
				return err
			}
			continue
		}
		s := &discoveryv1.EndpointSlice{ObjectMeta: sliceMeta(svc, managedBy), AddressType: discoveryv1.AddressTypeIPv4,
			Ports: d.ports, Endpoints: append([]discoveryv1.Endpoint{}, d.endpoints...)}
		created, err := api.Create(ctx, s, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating EndpointSlice for %s/%s: %w", svc.Namespace, svc.Name, err)
		}
		c.created.add(svc.Namespace+"/"+svc.Name, created.Name, time.Now())
	}
	for _, s := range existing[min(len(want), len(existing)):] {
		if err := api.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func (c *SliceController) update(ctx context.Context, cur *discoveryv1.EndpointSlice, d desiredSlice) error {
	if apiequality.Semantic.DeepEqual(cur.Ports, d.ports) && apiequality.Semantic.DeepEqual(cur.Endpoints, d.endpoints) {
		return nil
	}
	upd := cur.DeepCopy()
	upd.Ports, upd.Endpoints = d.ports, d.endpoints
	_, err := c.client.DiscoveryV1().EndpointSlices(cur.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("updating EndpointSlice %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	return nil
}
