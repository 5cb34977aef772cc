package replicaset

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/orch/orch/server/controllers/kit"
)

const (
	controllerName = "replicaset"
	// Component is the source of the Events this controller records.
	Component = "replicaset-controller"
	// BurstReplicas caps the pods created or deleted in one sync (upstream: 500).
	BurstReplicas = 500
	workers       = 2
)

// Kind is the GroupVersionKind of the pods' controller references.
var Kind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// Controller keeps the pods of its Owners (ReplicaSets, or
// ReplicationControllers seen as ReplicaSets). Build it with New or NewFor;
// Run it on the leader.
type Controller struct {
	client      kubernetes.Interface
	owners      Owners
	ownerIndex  cache.Indexer
	podLister   corelisters.PodLister
	podIndexer  cache.Indexer
	synced      []cache.InformerSynced
	queue       kit.Queue
	exp         *Expectations
	recorder    record.EventRecorder
	log         *zap.Logger
	now         func() time.Time
	terminating bool
}

// New registers the ReplicaSet and Pod handlers on kc's shared cache.
func New(kc *kit.Context) (*Controller, error) {
	inf := kc.Informers.Apps().V1().ReplicaSets().Informer()
	return NewFor(kc, Config{Owners: ReplicaSets(kc.Client, inf), Name: controllerName, Component: Component,
		TerminatingReplicas: true})
}

// NewFor registers the handlers of cfg.Owners and of pods on kc's shared cache.
func NewFor(kc *kit.Context, cfg Config) (*Controller, error) {
	ownerInf := cfg.Owners.Informer()
	podInf := kc.Informers.Core().V1().Pods()
	if err := AddPodOwnerIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	c := &Controller{client: kc.Client, owners: cfg.Owners, ownerIndex: ownerInf.GetIndexer(), podLister: podInf.Lister(),
		podIndexer: podInf.Informer().GetIndexer(),
		synced:     []cache.InformerSynced{ownerInf.HasSynced, podInf.Informer().HasSynced},
		queue:      kc.NewQueue(cfg.Name), exp: NewExpectations(nil),
		recorder: kc.Recorder(cfg.Component), log: kc.Logger.Named(cfg.Name), now: time.Now,
		terminating: cfg.TerminatingReplicas}
	if _, err := ownerInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { kit.Enqueue(c.queue, obj) },
		UpdateFunc: c.updateOwner,
		DeleteFunc: c.deleteOwner,
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.addPod, UpdateFunc: c.updatePod, DeleteFunc: c.deletePod,
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	return c, nil
}

// Run syncs the owners until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("controller running", zap.String("kind", c.owners.Kind().Kind))
	kit.RunWorkers(ctx, c.queue, workers, c.sync, c.log)
	return ctx.Err()
}

// get returns the cached owner ns/name as a ReplicaSet (NotFound if absent).
func (c *Controller) get(ns, name string) (*appsv1.ReplicaSet, error) {
	obj, ok, err := c.ownerIndex.GetByKey(ns + "/" + name)
	if err != nil {
		return nil, err
	}
	if !ok {
		k := c.owners.Kind()
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: k.Group, Resource: k.Kind}, name)
	}
	rs, ok := c.owners.View(obj)
	if !ok {
		return nil, fmt.Errorf("cached %s is a %T", ns+"/"+name, obj)
	}
	return rs, nil
}

// list returns the cached owners of namespace ns as ReplicaSets.
func (c *Controller) list(ns string) ([]*appsv1.ReplicaSet, error) {
	objs, err := c.ownerIndex.ByIndex(cache.NamespaceIndex, ns)
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.ReplicaSet, 0, len(objs))
	for _, o := range objs {
		if rs, ok := c.owners.View(o); ok {
			out = append(out, rs)
		}
	}
	return out, nil
}

func (c *Controller) updateOwner(oldObj, curObj any) {
	old, ok1 := c.owners.View(oldObj)
	cur, ok2 := c.owners.View(curObj)
	if !ok1 || !ok2 {
		return
	}
	if old.UID != cur.UID {
		c.deleteOwner(cache.DeletedFinalStateUnknown{Key: key(old), Obj: oldObj})
	}
	kit.Enqueue(c.queue, cur)
}

func (c *Controller) deleteOwner(obj any) {
	k, ok := kit.Key(obj)
	if !ok {
		return
	}
	c.exp.Delete(k)
	c.queue.Add(k)
}

// addPod: a pod with a controller ref lowers its owner's pending creations;
// an orphan wakes every ReplicaSet that might adopt it.
func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		c.deletePod(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if rs := c.resolve(pod.Namespace, ref); rs != nil {
			c.exp.CreationObserved(key(rs))
			c.queue.Add(key(rs))
		}
		return
	}
	c.enqueueMatching(pod)
}

func (c *Controller) updatePod(oldObj, curObj any) {
	old, cur := oldObj.(*corev1.Pod), curObj.(*corev1.Pod)
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	labelChanged := !reflect.DeepEqual(old.Labels, cur.Labels)
	if cur.DeletionTimestamp != nil {
		c.deletePod(cur)
		if labelChanged {
			c.deletePod(old)
		}
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := c.resolve(old.Namespace, oldRef); rs != nil {
			c.queue.Add(key(rs))
		}
	}
	if curRef != nil {
		if rs := c.resolve(cur.Namespace, curRef); rs != nil {
			c.queue.Add(key(rs))
			if !PodReady(old) && PodReady(cur) && rs.Spec.MinReadySeconds > 0 {
				c.queue.AddAfter(key(rs), time.Duration(rs.Spec.MinReadySeconds)*time.Second)
			}
		}
		return
	}
	if labelChanged || refChanged {
		c.enqueueMatching(cur)
	}
}

// deletePod records the deletion against the owner's expectations.
func (c *Controller) deletePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		t, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if pod, ok = t.Obj.(*corev1.Pod); !ok {
			return
		}
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	if rs := c.resolve(pod.Namespace, ref); rs != nil {
		c.exp.DeletionObserved(key(rs), podKey(pod))
		c.queue.Add(key(rs))
	}
}

// resolve returns the cached owner ref points to, if it is the same one.
func (c *Controller) resolve(ns string, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	if ref.Kind != c.owners.Kind().Kind {
		return nil
	}
	rs, err := c.get(ns, ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil
	}
	return rs
}

// enqueueMatching wakes the owners whose selector matches an orphan.
func (c *Controller) enqueueMatching(pod *corev1.Pod) {
	if len(pod.Labels) == 0 {
		return
	}
	all, err := c.list(pod.Namespace)
	if err != nil {
		return
	}
	for _, rs := range all {
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		c.queue.Add(key(rs))
	}
}

func key(o metav1.Object) string { return o.GetNamespace() + "/" + o.GetName() }

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
