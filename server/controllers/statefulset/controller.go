package statefulset

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	controllerName = "statefulset"
	// Component is the source of the Events this controller records.
	Component = "statefulset-controller"
	workers   = 2
)

// Kind is the GroupVersionKind of the pods' controller references.
var Kind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// Controller keeps StatefulSets' pods and claims. Build it with New; Run
// it on the leader.
type Controller struct {
	client     kubernetes.Interface
	setLister  appslisters.StatefulSetLister
	pvcLister  corelisters.PersistentVolumeClaimLister
	podIndexer cache.Indexer
	revs       *history.Store
	synced     []cache.InformerSynced
	queue      kit.Queue
	recorder   record.EventRecorder
	log        *zap.Logger
	now        func() time.Time
}

// New registers the StatefulSet, Pod, PersistentVolumeClaim and
// ControllerRevision informers on kc's shared cache.
func New(kc *kit.Context) (*Controller, error) {
	f := kc.Informers
	setInf, podInf, pvcInf := f.Apps().V1().StatefulSets(), f.Core().V1().Pods(), f.Core().V1().PersistentVolumeClaims()
	if err := replicaset.AddPodOwnerIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("statefulset: %w", err)
	}
	revs, revsSynced := history.NewStore(kc.Client, f)
	c := &Controller{client: kc.Client, setLister: setInf.Lister(), pvcLister: pvcInf.Lister(),
		podIndexer: podInf.Informer().GetIndexer(), revs: revs,
		synced: []cache.InformerSynced{setInf.Informer().HasSynced, podInf.Informer().HasSynced, pvcInf.Informer().HasSynced},
		queue:  kc.NewQueue(controllerName), recorder: kc.Recorder(Component),
		log: kc.Logger.Named(controllerName), now: time.Now}
	if revsSynced != nil {
		c.synced = append(c.synced, revsSynced)
	}
	if _, err := setInf.Informer().AddEventHandler(kit.EnqueueHandler(c.queue)); err != nil {
		return nil, fmt.Errorf("statefulset: %w", err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.podChanged, DeleteFunc: c.podChanged, UpdateFunc: func(_, obj any) { c.podChanged(obj) },
	}); err != nil {
		return nil, fmt.Errorf("statefulset: %w", err)
	}
	return c, nil
}

// Run syncs StatefulSets until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("statefulset controller running")
	kit.RunWorkers(ctx, c.queue, workers, c.sync, c.log)
	return ctx.Err()
}

// podChanged wakes the pod's StatefulSet.
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
