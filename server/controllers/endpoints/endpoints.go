package endpoints

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// Annotations and labels upstream's Endpoints controller sets.
const (
	triggerTimeAnnotation = corev1.EndpointsLastChangeTriggerTime
	headlessLabel         = corev1.IsHeadlessService
)

// Controller keeps Endpoints of Services with selectors.
type Controller struct {
	*base
	client    kubernetes.Interface
	endpoints corelisters.EndpointsLister
	epSynced  cache.InformerSynced
}

// New registers the informers and handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	b, err := newBase(kc, "endpoints")
	if err != nil {
		return nil, err
	}
	eps := kc.Informers.Core().V1().Endpoints()
	c := &Controller{base: b, client: kc.Client, endpoints: eps.Lister(), epSynced: eps.Informer().HasSynced}
	// An Endpoints of this controller changed by someone else is put back;
	// Endpoints someone made without a Service stay theirs.
	_, err = eps.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if ep, ok := obj.(*corev1.Endpoints); ok && ep.Annotations[triggerTimeAnnotation] != "" {
				kit.Enqueue(c.queue, obj)
			}
		},
		DeleteFunc: func(obj any) { kit.Enqueue(c.queue, obj) },
	})
	return c, err
}

// Run runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error { return c.run(ctx, c.sync, c.epSynced) }

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return c.deleteFor(ctx, ns, name)
	}
	if err != nil || svc.Spec.Selector == nil {
		return err // no selector: the Endpoints are the user's
	}
	pods, err := c.selected(svc)
	if err != nil {
		return err
	}
	want := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: endpointsLabels(svc)},
		Subsets: subsetsFor(svc, endpointsFor(svc, pods, false))}
	cur, err := c.endpoints.Endpoints(ns).Get(name)
	if apierrors.IsNotFound(err) {
		stamp(want)
		_, err = c.client.CoreV1().Endpoints(ns).Create(ctx, want, metav1.CreateOptions{})
		return ignoreExists(err)
	}
	if err != nil {
		return err
	}
	if apiequality.Semantic.DeepEqual(cur.Subsets, want.Subsets) && apiequality.Semantic.DeepEqual(cur.Labels, want.Labels) {
		return nil
	}
	upd := cur.DeepCopy()
	upd.Subsets, upd.Labels = want.Subsets, want.Labels
	stamp(upd)
	if _, err := c.client.CoreV1().Endpoints(ns).Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating Endpoints %s: %w", key, err)
	}
	return nil
}

// deleteFor removes the Endpoints of a deleted Service (only ones this
// controller would have made: user Endpoints of selector-less Services
// are deleted with the Service by users themselves, as upstream).
func (c *Controller) deleteFor(ctx context.Context, ns, name string) error {
	if _, err := c.endpoints.Endpoints(ns).Get(name); apierrors.IsNotFound(err) {
		return nil
	}
	err := c.client.CoreV1().Endpoints(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func endpointsLabels(svc *corev1.Service) map[string]string {
	out := map[string]string{}
	for k, v := range svc.Labels {
		out[k] = v
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		out[headlessLabel] = ""
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func stamp(ep *corev1.Endpoints) {
	if ep.Annotations == nil {
		ep.Annotations = map[string]string{}
	}
	ep.Annotations[triggerTimeAnnotation] = time.Now().UTC().Format(time.RFC3339)
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
