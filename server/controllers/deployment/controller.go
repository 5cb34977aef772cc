package deployment

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
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/replicaset"
)

const (
	controllerName = "deployment"
	// Component is the source of the Events this controller records.
	Component = "deployment-controller"
	workers   = 2
	// maxRetries before a failing key is dropped until its next change (upstream: 15).
	maxRetries = 15
)

// Kind is the GroupVersionKind of the ReplicaSets' controller references.
var Kind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// Controller rolls Deployments out. Build it with New; Run it on the leader.
type Controller struct {
	client     kubernetes.Interface
	dLister    appslisters.DeploymentLister
	rsLister   appslisters.ReplicaSetLister
	podIndexer cache.Indexer
	synced     []cache.InformerSynced
	queue      kit.Queue
	recorder   record.EventRecorder
	log        *zap.Logger
	now        func() time.Time
}

// New registers the Deployment, ReplicaSet and Pod handlers on kc's cache.
func New(kc *kit.Context) (*Controller, error) {
	dInf := kc.Informers.Apps().V1().Deployments()
	rsInf := kc.Informers.Apps().V1().ReplicaSets()
	podInf := kc.Informers.Core().V1().Pods()
	if err := replicaset.AddPodOwnerIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("deployment: %w", err)
	}
	c := &Controller{client: kc.Client, dLister: dInf.Lister(), rsLister: rsInf.Lister(),
		podIndexer: podInf.Informer().GetIndexer(),
		synced:     []cache.InformerSynced{dInf.Informer().HasSynced, rsInf.Informer().HasSynced, podInf.Informer().HasSynced},
		queue:      kc.NewQueue(controllerName), recorder: kc.Recorder(Component),
		log: kc.Logger.Named(controllerName), now: time.Now}
	regs := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{dInf.Informer(), kit.EnqueueHandler(c.queue)},
		{rsInf.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: c.addRS, UpdateFunc: c.updateRS, DeleteFunc: c.deleteRS}},
		{podInf.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: c.deletePod}},
	}
	for _, r := range regs {
		if _, err := r.inf.AddEventHandler(r.h); err != nil {
			return nil, fmt.Errorf("deployment: %w", err)
		}
	}
	return c, nil
}

// Run syncs Deployments until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("deployment controller running")
	kit.RunWorkers(ctx, c.queue, workers, c.syncWithRetryLimit, c.log)
	return ctx.Err()
}

// syncWithRetryLimit drops a key that failed maxRetries times in a row.
func (c *Controller) syncWithRetryLimit(ctx context.Context, key string) error {
	err := c.sync(ctx, key)
	if err != nil && c.queue.NumRequeues(key) >= maxRetries {
		c.log.Warn("dropping deployment out of the queue", zap.String("deployment", key), zap.Error(err))
		c.queue.Forget(key)
		return nil
	}
	return err
}

func (c *Controller) addRS(obj any) {
	rs := obj.(*appsv1.ReplicaSet)
	if rs.DeletionTimestamp != nil {
		c.deleteRS(rs)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		c.enqueueRef(rs.Namespace, ref)
		return
	}
	c.enqueueMatching(rs)
}

func (c *Controller) updateRS(oldObj, curObj any) {
	old, cur := oldObj.(*appsv1.ReplicaSet), curObj.(*appsv1.ReplicaSet)
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		c.enqueueRef(old.Namespace, oldRef)
	}
	if curRef != nil {
		c.enqueueRef(cur.Namespace, curRef)
		return
	}
	if refChanged || !reflect.DeepEqual(old.Labels, cur.Labels) {
		c.enqueueMatching(cur)
	}
}

func (c *Controller) deleteRS(obj any) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		t, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if rs, ok = t.Obj.(*appsv1.ReplicaSet); !ok {
			return
		}
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		c.enqueueRef(rs.Namespace, ref)
	}
}

// deletePod wakes a Recreate Deployment waiting for its old pods to go.
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
	if ref == nil || ref.Kind != replicaset.Kind.Kind {
		return
	}
	rs, err := c.rsLister.ReplicaSets(pod.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return
	}
	if dref := metav1.GetControllerOfNoCopy(rs); dref != nil {
		if d := c.resolve(rs.Namespace, dref); d != nil && d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
			kit.Enqueue(c.queue, d)
		}
	}
}

func (c *Controller) enqueueRef(ns string, ref *metav1.OwnerReference) {
	if d := c.resolve(ns, ref); d != nil {
		kit.Enqueue(c.queue, d)
	}
}

func (c *Controller) resolve(ns string, ref *metav1.OwnerReference) *appsv1.Deployment {
	if ref.Kind != Kind.Kind {
		return nil
	}
	d, err := c.dLister.Deployments(ns).Get(ref.Name)
	if err != nil || d.UID != ref.UID {
		return nil
	}
	return d
}

// enqueueMatching wakes the Deployments whose selector matches an orphan RS.
func (c *Controller) enqueueMatching(rs *appsv1.ReplicaSet) {
	if len(rs.Labels) == 0 {
		return
	}
	ds, err := c.dLister.Deployments(rs.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, d := range ds {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(rs.Labels)) {
			kit.Enqueue(c.queue, d)
		}
	}
}
