package nodelifecycle

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/orch/orch/server/controllers/kit"
)

const (
	name = "node-lifecycle"
	// leaseNamespace holds the nodes' heartbeat Leases.
	leaseNamespace = corev1.NamespaceNodeLease
	// podNodeIndex indexes pods by spec.nodeName.
	podNodeIndex = "spec.nodeName"
	// defaultGrace is --node-monitor-grace-period's default.
	defaultGrace = 40 * time.Second
)

// Controller watches Nodes, their Leases and pods.
type Controller struct {
	client   kubernetes.Interface
	nodes    corelisters.NodeLister
	leases   coordlisters.LeaseLister
	pods     cache.Indexer
	synced   []cache.InformerSynced
	nodeQ    kit.Queue
	podQ     kit.Queue
	obs      *observer
	grace    time.Duration
	clock    clock.Clock
	recorder record.EventRecorder
	log      *zap.Logger

	missingMu sync.Mutex
	missing   map[string]time.Time // Node name → first seen missing
}

// New registers the informers and handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	return newWithClock(kc, clock.RealClock{})
}

func newWithClock(kc *kit.Context, clk clock.Clock) (*Controller, error) {
	grace := kc.Options.NodeMonitorGracePeriod
	if grace <= 0 {
		grace = defaultGrace
	}
	nodes := kc.Informers.Core().V1().Nodes()
	leases := kc.Informers.Coordination().V1().Leases()
	pods := kc.Informers.Core().V1().Pods()
	if err := pods.Informer().AddIndexers(cache.Indexers{podNodeIndex: podNodeName}); err != nil {
		return nil, err
	}
	c := &Controller{client: kc.Client, nodes: nodes.Lister(), leases: leases.Lister(), pods: pods.Informer().GetIndexer(),
		synced: []cache.InformerSynced{nodes.Informer().HasSynced, leases.Informer().HasSynced, pods.Informer().HasSynced},
		nodeQ:  kc.NewQueue(name + "-nodes"), podQ: kc.NewQueue(name + "-pods"), obs: newObserver(), grace: grace,
		clock: clk, recorder: kc.Recorder("node-controller"), log: kc.Logger.Named(name), missing: map[string]time.Time{}}
	if err := c.addHandlers(nodes.Informer(), leases.Informer(), pods.Informer()); err != nil {
		return nil, err
	}
	return c, nil
}

func podNodeName(obj any) ([]string, error) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}

func (c *Controller) addHandlers(nodes, leases, pods cache.SharedIndexInformer) error {
	if _, err := nodes.AddEventHandler(kit.EnqueueHandler(c.nodeQ)); err != nil {
		return err
	}
	if _, err := leases.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			k, ok := kit.Key(obj)
			return ok && len(k) > len(leaseNamespace) && k[:len(leaseNamespace)+1] == leaseNamespace+"/"
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.enqueueLeaseNode(obj) },
			UpdateFunc: func(_, obj any) { c.enqueueLeaseNode(obj) },
		},
	}); err != nil {
		return err
	}
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { kit.Enqueue(c.podQ, obj) },
		UpdateFunc: func(_, obj any) { kit.Enqueue(c.podQ, obj) },
	})
	return err
}

func (c *Controller) enqueueLeaseNode(obj any) {
	if k, ok := kit.Key(obj); ok {
		c.nodeQ.Add(k[len(leaseNamespace)+1:])
	}
}

// Run runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("node lifecycle controller running", zap.Duration("gracePeriod", c.grace))
	done := make(chan struct{})
	go func() {
		kit.RunWorkers(ctx, c.podQ, 2, c.syncPod, c.log)
		close(done)
	}()
	kit.RunWorkers(ctx, c.nodeQ, 1, c.syncNode, c.log)
	<-done
	return nil
}
