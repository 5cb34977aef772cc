package nodeipam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// run is the state of one Run: owned by its single worker goroutine.
type run struct {
	c        *Controller
	lister   corelisters.NodeLister
	set      *CIDRSet
	owner    map[string]netip.Prefix // node name → its subnet (set or being set)
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
}

func (r *run) handlers() cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			r.queue.Add(key)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			o, n := old.(*corev1.Node), cur.(*corev1.Node)
			if n.Spec.PodCIDR == "" || o.Spec.PodCIDR != n.Spec.PodCIDR {
				enqueue(cur)
			}
		},
		DeleteFunc: enqueue,
	}
}

// rebuild occupies the subnets of all Nodes in the cache.
func (r *run) rebuild() error {
	nodes, err := r.lister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("nodeipam: listing nodes: %w", err)
	}
	for _, n := range nodes {
		r.observe(n)
	}
	return nil
}

// observe records the subnet a Node already has.
func (r *run) observe(n *corev1.Node) {
	if n.Spec.PodCIDR == "" {
		return
	}
	p, err := netip.ParsePrefix(n.Spec.PodCIDR)
	if err == nil {
		_, err = r.set.Occupy(p)
	}
	if err != nil {
		r.c.log.Debug("node pod CIDR not managed here", zap.String("node", n.Name), zap.String("podCIDR", n.Spec.PodCIDR), zap.Error(err))
		return
	}
	for other, q := range r.owner {
		if q == p && other != n.Name {
			r.c.log.Warn("two nodes have the same pod CIDR", zap.String("podCIDR", n.Spec.PodCIDR),
				zap.String("node", n.Name), zap.String("other", other))
		}
	}
	r.owner[n.Name] = p
}

func (r *run) processNext(ctx context.Context) bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	if err := r.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			r.c.log.Info("assigning pod CIDR, will retry", zap.String("node", key), zap.Error(err))
		}
		r.queue.AddRateLimited(key)
		return true
	}
	r.queue.Forget(key)
	return true
}

// sync makes one Node's state true: deleted → subnet released; has a pod
// CIDR → recorded; lacks one → assigned.
func (r *run) sync(ctx context.Context, name string) error {
	n, err := r.lister.Get(name)
	if apierrors.IsNotFound(err) {
		r.release(name)
		return nil
	}
	if err != nil {
		return err
	}
	if n.Spec.PodCIDR != "" {
		if p, ok := r.owner[name]; ok && p.String() != n.Spec.PodCIDR {
			r.release(name) // someone else set it: our reservation is not needed
		}
		r.observe(n)
		return nil
	}
	return r.assign(ctx, n)
}

func (r *run) release(name string) {
	p, ok := r.owner[name]
	if !ok {
		return
	}
	delete(r.owner, name)
	_ = r.set.Release(p)
	r.c.log.Info("released pod CIDR", zap.String("node", name), zap.Stringer("podCIDR", p))
	r.retryWaiting()
}

// retryWaiting requeues Nodes still without a pod CIDR (after a release).
func (r *run) retryWaiting() {
	nodes, err := r.lister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, n := range nodes {
		if n.Spec.PodCIDR == "" && n.DeletionTimestamp == nil {
			r.queue.Add(n.Name)
		}
	}
}

// assign reserves a subnet for n (or reuses its reservation) and patches it.
func (r *run) assign(ctx context.Context, n *corev1.Node) error {
	p, ok := r.owner[n.Name]
	if !ok {
		var err error
		if p, err = r.set.AllocateNext(); err != nil {
			r.recorder.Eventf(n, corev1.EventTypeWarning, EventCIDRNotAvailable, "Node %s has no pod CIDR: %v", n.Name, err)
			return err
		}
		r.owner[n.Name] = p
	}
	err := r.patch(ctx, n.Name, p)
	switch {
	case err == nil:
		r.c.log.Info("assigned pod CIDR", zap.String("node", n.Name), zap.Stringer("podCIDR", p))
		return nil
	case apierrors.IsNotFound(err):
		r.release(n.Name)
		return nil
	case apierrors.IsInvalid(err) || apierrors.IsConflict(err):
		// The Node got another pod CIDR meanwhile; the next sync records it.
		r.release(n.Name)
		return fmt.Errorf("patching node %s: %w", n.Name, err)
	}
	// Outcome unknown (it may have been written): keep the reservation so
	// the retry writes the same subnet and no other Node can take it.
	return fmt.Errorf("patching node %s: %w", n.Name, err)
}

func (r *run) patch(ctx context.Context, name string, p netip.Prefix) error {
	body, err := json.Marshal(map[string]any{"spec": map[string]any{"podCIDR": p.String(), "podCIDRs": []string{p.String()}}})
	if err != nil {
		return errors.Join(errors.New("encoding patch"), err)
	}
	_, err = r.c.client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "orch-" + controllerName})
	return err
}
