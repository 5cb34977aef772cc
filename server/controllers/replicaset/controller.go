package replicaset

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
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

// Controller keeps ReplicaSets' pods. Build it with New; Run it on the leader.
type Controller struct {
	client     kubernetes.Interface
	rsLister   appslisters.ReplicaSetLister
	podLister  corelisters.PodLister
	podIndexer cache.Indexer
	synced     []cache.InformerSynced
	queue      kit.Queue
	exp        *Expectations
	recorder   record.EventRecorder
	log        *zap.Logger
	now        func() time.Time
}

// New registers the ReplicaSet and Pod handlers on kc's shared cache.
func New(kc *kit.Context) (*Controller, error) {
	rsInf := kc.Informers.Apps().V1().ReplicaSets()
	podInf := kc.Informers.Core().V1().Pods()
	if err := AddPodOwnerIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	c := &Controller{client: kc.Client, rsLister: rsInf.Lister(), podLister: podInf.Lister(),
		podIndexer: podInf.Informer().GetIndexer(),
		synced:     []cache.InformerSynced{rsInf.Informer().HasSynced, podInf.Informer().HasSynced},
		queue:      kit.NewQueue(controllerName), exp: NewExpectations(nil),
		recorder: kc.Recorder(Component), log: kc.Logger.Named(controllerName), now: time.Now}
	if _, err := rsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { kit.Enqueue(c.queue, obj) },
		UpdateFunc: c.updateRS,
		DeleteFunc: c.deleteRS,
	}); err != nil {
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.addPod, UpdateFunc: c.updatePod, DeleteFunc: c.deletePod,
	}); err != nil {
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	return c, nil
}

// Run syncs ReplicaSets until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("replicaset controller running")
	kit.RunWorkers(ctx, c.queue, workers, c.sync, c.log)
	return ctx.Err()
}

func (c *Controller) updateRS(oldObj, curObj any) {
	old, cur := oldObj.(*appsv1.ReplicaSet), curObj.(*appsv1.ReplicaSet)
	if old.UID != cur.UID {
		c.deleteRS(cache.DeletedFinalStateUnknown{Key: key(old), Obj: old})
	}
	kit.Enqueue(c.queue, cur)
}

func (c *Controller) deleteRS(obj any) {
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

// resolve returns the cached ReplicaSet ref points to, if it is the same one.
func (c *Controller) resolve(ns string, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	if ref.Kind != Kind.Kind {
		return nil
	}
	rs, err := c.rsLister.ReplicaSets(ns).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil
	}
	return rs
}

// enqueueMatching wakes the ReplicaSets whose selector matches an orphan.
func (c *Controller) enqueueMatching(pod *corev1.Pod) {
	if len(pod.Labels) == 0 {
		return
	}
	all, err := c.rsLister.ReplicaSets(pod.Namespace).List(labels.Everything())
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
