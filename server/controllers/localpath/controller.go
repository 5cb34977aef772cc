package localpath

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

	agentlp "github.com/orch/orch/agent/localpath"
	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/pvbinder"
)

// Component is the event source.
const Component = agentlp.ProvisionerName + "_orch"

// Controller provisions and deletes local-path volumes.
type Controller struct {
	client  kubernetes.Interface
	log     *zap.Logger
	rec     record.EventRecorder
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
	nodes   corelisters.NodeLister
	synced  []cache.InformerSynced
	claimQ  kit.Queue
	volumeQ kit.Queue
}

// New registers the informers and handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	f := kc.Informers
	pvcs, pvs := f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes()
	scs, nodes := f.Storage().V1().StorageClasses(), f.Core().V1().Nodes()
	c := &Controller{client: kc.Client, log: kc.Logger.Named("localpath"), rec: kc.Recorder(Component),
		claims: pvcs.Lister(), volumes: pvs.Lister(), classes: scs.Lister(), nodes: nodes.Lister(),
		synced: []cache.InformerSynced{pvcs.Informer().HasSynced, pvs.Informer().HasSynced,
			scs.Informer().HasSynced, nodes.Informer().HasSynced},
		claimQ: kc.NewQueue("localpath-claims"), volumeQ: kc.NewQueue("localpath-volumes")}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{pvcs.Informer(), kit.EnqueueHandler(c.claimQ)},
		{pvs.Informer(), kit.EnqueueHandler(c.volumeQ)},
		{nodes.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    c.nodeChanged,
			UpdateFunc: func(_, obj any) { c.nodeChanged(obj) },
		}},
	}
	for _, h := range handlers {
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			return nil, fmt.Errorf("localpath: %w", err)
		}
	}
	return c, nil
}

// Run ensures the StorageClass, then provisions and deletes until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	go c.ensureClassLoop(ctx)
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("local-path provisioner running")
	done := make(chan struct{})
	go func() {
		defer close(done)
		kit.RunWorkers(ctx, c.volumeQ, 1, c.syncVolume, c.log)
	}()
	kit.RunWorkers(ctx, c.claimQ, 1, c.syncClaim, c.log)
	<-done
	return ctx.Err()
}

// nodeChanged requeues the pending claims waiting for that node (its
// agent may just have reported its storage dir).
func (c *Controller) nodeChanged(obj any) {
	node, ok := obj.(*corev1.Node)
	if !ok || node.Annotations[agentlp.NodeDirAnnotation] == "" {
		return
	}
	all, err := c.claims.List(labels.Everything())
	if err != nil {
		return
	}
	for _, pvc := range all {
		if pvc.Spec.VolumeName == "" && pvc.Annotations[pvbinder.AnnSelectedNode] == node.Name {
			kit.Enqueue(c.claimQ, pvc)
		}
	}
}
