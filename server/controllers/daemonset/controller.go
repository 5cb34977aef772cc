package daemonset

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

	"github.com/orch/orch/server/controllers/history"
	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/replicaset"
)

const (
	controllerName = "daemonset"
	// Component is the source of the Events this controller records.
	Component = "daemonset-controller"
	workers   = 2
)

// Kind is the GroupVersionKind of the pods' controller references.
var Kind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// Controller keeps DaemonSets' pods. Build it with New; Run it on the leader.
type Controller struct {
	client     kubernetes.Interface
	dsLister   appslisters.DaemonSetLister
	nodeLister corelisters.NodeLister
	podIndexer cache.Indexer
	revs       *history.Store
	synced     []cache.InformerSynced
	queue      kit.Queue
	exp        *expectations
	recorder   record.EventRecorder
	log        *zap.Logger
	now        func() time.Time
}

// New registers the DaemonSet, Pod, Node and ControllerRevision informers
// on kc's shared cache.
func New(kc *kit.Context) (*Controller, error) {
	f := kc.Informers
	dsInf, podInf, nodeInf := f.Apps().V1().DaemonSets(), f.Core().V1().Pods(), f.Core().V1().Nodes()
	revs, revsSynced := history.NewStore(kc.Client, f)
	if err := replicaset.AddPodOwnerIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("daemonset: %w", err)
	}
	c := &Controller{client: kc.Client, dsLister: dsInf.Lister(), nodeLister: nodeInf.Lister(),
		podIndexer: podInf.Informer().GetIndexer(),
		revs:       revs,
		synced:     []cache.InformerSynced{dsInf.Informer().HasSynced, podInf.Informer().HasSynced, nodeInf.Informer().HasSynced},
		queue:      kc.NewQueue(controllerName), exp: newExpectations(),
		recorder: kc.Recorder(Component), log: kc.Logger.Named(controllerName), now: time.Now}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{dsInf.Informer(), kit.EnqueueHandler(c.queue)},
		{podInf.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: c.podChanged, DeleteFunc: c.podChanged,
			UpdateFunc: func(_, obj any) { c.podChanged(obj) }}},
		{nodeInf.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: c.nodeChanged, DeleteFunc: c.nodeChanged,
			UpdateFunc: c.nodeUpdated}},
	}
	if revsSynced != nil {
		c.synced = append(c.synced, revsSynced)
	}
	for _, h := range handlers {
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			return nil, fmt.Errorf("daemonset: %w", err)
		}
	}
	return c, nil
}

// Run syncs DaemonSets until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("daemonset controller running")
	kit.RunWorkers(ctx, c.queue, workers, c.sync, c.log)
	return ctx.Err()
}

// podChanged wakes the pod's DaemonSet.
func (c *Controller) podChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && ref.Kind == Kind.Kind && ref.APIVersion == Kind.GroupVersion().String() {
		c.queue.Add(pod.Namespace + "/" + ref.Name)
	}
}

// nodeChanged wakes every DaemonSet (a node was added or removed).
func (c *Controller) nodeChanged(any) {
	all, err := c.dsLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ds := range all {
		kit.Enqueue(c.queue, ds)
	}
}

// nodeUpdated wakes every DaemonSet when what eligibility reads changed.
func (c *Controller) nodeUpdated(oldObj, curObj any) {
	o, n := oldObj.(*corev1.Node), curObj.(*corev1.Node)
	if reflect.DeepEqual(o.Labels, n.Labels) && reflect.DeepEqual(o.Spec.Taints, n.Spec.Taints) &&
		o.Spec.Unschedulable == n.Spec.Unschedulable {
		return
	}
	c.nodeChanged(n)
}
