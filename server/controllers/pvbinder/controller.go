package pvbinder

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/orch/orch/server/controllers/kit"
)

// Component is the event source and logger name.
const Component = "persistentvolume-controller"

// Controller binds claims to volumes. Build it with New, run it on the leader.
type Controller struct {
	client  kubernetes.Interface
	log     *zap.Logger
	rec     record.EventRecorder
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
	nodes   corelisters.NodeLister
	pods    corelisters.PodLister
	synced  []cache.InformerSynced
	claimQ  kit.Queue
	volumeQ kit.Queue
}

// New registers the informers and handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	f := kc.Informers
	pvcs, pvs := f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes()
	scs, nodes := f.Storage().V1().StorageClasses(), f.Core().V1().Nodes()
	pods := f.Core().V1().Pods()
	c := &Controller{client: kc.Client, log: kc.Logger.Named("pvbinder"), rec: kc.Recorder(Component),
		claims: pvcs.Lister(), volumes: pvs.Lister(), classes: scs.Lister(), nodes: nodes.Lister(), pods: pods.Lister(),
		synced: []cache.InformerSynced{pvcs.Informer().HasSynced, pvs.Informer().HasSynced,
			scs.Informer().HasSynced, nodes.Informer().HasSynced, pods.Informer().HasSynced},
		claimQ: kc.NewQueue("pvbinder-claims"), volumeQ: kc.NewQueue("pvbinder-volumes")}
	if _, err := pvcs.Informer().AddEventHandler(c.claimHandler()); err != nil {
		return nil, fmt.Errorf("pvbinder: %w", err)
	}
	if _, err := pvs.Informer().AddEventHandler(c.volumeHandler()); err != nil {
		return nil, fmt.Errorf("pvbinder: %w", err)
	}
	if _, err := pods.Informer().AddEventHandler(c.podHandler()); err != nil {
		return nil, fmt.Errorf("pvbinder: %w", err)
	}
	if _, err := scs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueueUnbound() },
		UpdateFunc: func(any, any) { c.enqueueUnbound() },
	}); err != nil {
		return nil, fmt.Errorf("pvbinder: %w", err)
	}
	return c, nil
}

// Run binds until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("persistent volume binder running")
	done := make(chan struct{})
	go func() {
		defer close(done)
		kit.RunWorkers(ctx, c.volumeQ, 1, c.syncVolume, c.log)
	}()
	kit.RunWorkers(ctx, c.claimQ, 1, c.syncClaim, c.log)
	<-done
	return ctx.Err()
}

func (c *Controller) claimHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { kit.Enqueue(c.claimQ, obj) },
		UpdateFunc: func(_, obj any) { kit.Enqueue(c.claimQ, obj) },
		DeleteFunc: func(obj any) {
			kit.Enqueue(c.claimQ, obj)
			if pvc := claimOf(obj); pvc != nil && pvc.Spec.VolumeName != "" {
				c.volumeQ.Add(pvc.Spec.VolumeName)
			}
		},
	}
}

func (c *Controller) volumeHandler() cache.ResourceEventHandler {
	claimOfVolume := func(obj any) {
		pv, ok := obj.(*corev1.PersistentVolume)
		if !ok {
			if t, ok2 := obj.(cache.DeletedFinalStateUnknown); ok2 {
				pv, ok = t.Obj.(*corev1.PersistentVolume)
			}
		}
		if ok && pv.Spec.ClaimRef != nil {
			c.claimQ.Add(pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name)
		}
	}
	// A volume without a claim may be what a pending claim waits for:
	// upstream finds it at its next periodic resync of every claim (15 s),
	// this binder requeues the unbound claims at once.
	freeVolume := func(obj any) {
		if pv, ok := obj.(*corev1.PersistentVolume); ok && pv.Spec.ClaimRef == nil {
			c.enqueueUnbound()
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { kit.Enqueue(c.volumeQ, obj); claimOfVolume(obj); freeVolume(obj) },
		UpdateFunc: func(_, obj any) { kit.Enqueue(c.volumeQ, obj); claimOfVolume(obj); freeVolume(obj) },
		DeleteFunc: claimOfVolume,
	}
}

// enqueueUnbound requeues every unbound claim (a class appeared or
// changed, a volume without a claim appeared or changed).
func (c *Controller) enqueueUnbound() {
	all, err := c.claims.List(labels.Everything())
	if err != nil {
		return
	}
	for _, pvc := range all {
		if pvc.Spec.VolumeName == "" {
			kit.Enqueue(c.claimQ, pvc)
		}
	}
}

func claimOf(obj any) *corev1.PersistentVolumeClaim {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pvc, _ := obj.(*corev1.PersistentVolumeClaim)
	return pvc
}
