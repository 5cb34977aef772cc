package kubelet

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/agent/runtime"
	"github.com/orch/orch/internal/cachetrim"
)

// Config holds the pod loop's collaborators and node facts.
type Config struct {
	NodeName string
	Client   kubernetes.Interface
	// Informers, when set, is the agent's shared factory the Services (for
	// the service link variables) come from.
	Informers informers.SharedInformerFactory
	Runtime   runtime.Interface
	Network   network.Interface
	Cgroups   Cgroups
	Images    Images
	Volumes   Volumes
	Probes    Probes // nil: NoProbes
	// PodCerts, when set, is the pod certificate manager (agent/certs):
	// the kubelet runs it, drops the state of pods it cleaned up, and
	// resyncs a pod when its certificate request changes.
	PodCerts PodCerts
	Hooks    Hooks // nil: lifecycle hooks are not run
	// Env resolves a container's environment; nil uses agent/envvars with
	// ConfigMaps and Secrets read from the API.
	Env      func(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIP string) ([]string, error)
	Recorder record.EventRecorder
	PodsDir  string // <data-dir>/agent/pods
	DNS      DNS
	HostIP   string
	// Allocatable is what admission fits pods into; MemoryCapacity feeds
	// the OOM score policy.
	Allocatable    corev1.ResourceList
	MemoryCapacity int64
	Workers        int           // pods synced at once (default 16; upstream: a goroutine per pod)
	RelistPeriod   time.Duration // default 2s
	// SyncPeriod is the periodic re-sync of every pod (refreshing
	// configMap/secret volumes) and orphan collection; default 1m.
	SyncPeriod time.Duration
	Now        func() time.Time
	Log        *zap.Logger
}

// Kubelet runs the pods bound to one node.
type Kubelet struct {
	cfg     Config
	log     *zap.Logger
	queue   workqueue.TypedRateLimitingInterface[string]
	lister  listersv1.PodLister
	factory informers.SharedInformerFactory
	// services feed the service link variables (KUBERNETES_SERVICE_HOST...).
	svcFactory informers.SharedInformerFactory
	services   listersv1.ServiceLister
	synced     cache.InformerSynced

	mu     sync.Mutex
	pods   map[types.UID]*podState
	byKey  map[string]types.UID
	relist map[string]runtime.State // container ID → last seen state
}

// New checks cfg and returns a Kubelet; Run starts it.
func New(cfg Config) (*Kubelet, error) {
	if cfg.NodeName == "" || cfg.Client == nil || cfg.Runtime == nil || cfg.Network == nil || cfg.Cgroups == nil || cfg.Images == nil || cfg.Volumes == nil {
		return nil, fmt.Errorf("kubelet: NodeName, Client, Runtime, Network, Cgroups, Images and Volumes are required")
	}
	if cfg.Probes == nil {
		cfg.Probes = NoProbes{}
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 16
	}
	if cfg.RelistPeriod <= 0 {
		cfg.RelistPeriod = 2 * time.Second
	}
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	k := &Kubelet{cfg: cfg, log: cfg.Log, pods: map[types.UID]*podState{}, byKey: map[string]types.UID{}, relist: map[string]runtime.State{}}
	k.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods"})
	k.factory = informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0, cachetrim.Option(),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", cfg.NodeName).String()
		}))
	if k.svcFactory = cfg.Informers; k.svcFactory == nil {
		k.svcFactory = informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0, cachetrim.Option())
	}
	k.services = k.svcFactory.Core().V1().Services().Lister()
	if k.cfg.Env == nil {
		k.cfg.Env = k.apiEnv()
	}
	inf := k.factory.Core().V1().Pods()
	k.lister, k.synced = inf.Lister(), inf.Informer().HasSynced
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: k.enqueue,
		UpdateFunc: func(o, n interface{}) {
			if needsSync(o, n) {
				k.enqueue(n)
			}
		},
		DeleteFunc: k.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	return k, nil
}

// Run watches the node's pods and syncs them until ctx ends. Containers
// keep running when it returns.
func (k *Kubelet) Run(ctx context.Context) error {
	k.factory.StartWithContext(ctx)
	defer k.factory.Shutdown()
	k.svcFactory.StartWithContext(ctx)
	defer k.svcFactory.Shutdown()
	svcSynced := k.svcFactory.Core().V1().Services().Informer().HasSynced
	if !cache.WaitForCacheSync(ctx.Done(), k.synced, svcSynced) {
		return ctx.Err()
	}
	k.adopt(ctx)
	var wg sync.WaitGroup
	for i := 0; i < k.cfg.Workers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); k.worker(ctx) }()
	}
	if k.cfg.PodCerts != nil {
		wg.Add(1)
		go func() { defer wg.Done(); k.cfg.PodCerts.Run(ctx, k.resync) }()
	}
	wg.Add(3)
	go func() { defer wg.Done(); k.relistLoop(ctx) }()
	go func() { defer wg.Done(); k.probeLoop(ctx) }()
	go func() { defer wg.Done(); k.gcLoop(ctx) }()
	<-ctx.Done()
	k.queue.ShutDown()
	wg.Wait()
	return nil
}

// needsSync tells whether an update of a pod asks for a sync. An update of
// the status alone does not, unless its phase changed (a pod that became
// terminal is finished) or the pod has readiness gates (its Ready
// condition follows conditions others write): the kubelet's own status
// patches come back as such updates, two to four per pod start, and
// upstream's pod config source does not sync a pod for them either.
func needsSync(oldObj, newObj interface{}) bool {
	o, ok1 := oldObj.(*corev1.Pod)
	n, ok2 := newObj.(*corev1.Pod)
	if !ok1 || !ok2 || len(n.Spec.ReadinessGates) > 0 || o.Status.Phase != n.Status.Phase {
		return true
	}
	oc, nc := *o, *n
	oc.Status, nc.Status = corev1.PodStatus{}, corev1.PodStatus{}
	oc.ResourceVersion, nc.ResourceVersion = "", ""
	oc.ManagedFields, nc.ManagedFields = nil, nil
	return !equality.Semantic.DeepEqual(&oc, &nc)
}

func (k *Kubelet) enqueue(obj interface{}) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	k.queue.Add(key)
}

// resync queues the pod namespace/name for a sync.
func (k *Kubelet) resync(namespace, name string) { k.queue.Add(namespace + "/" + name) }

func (k *Kubelet) worker(ctx context.Context) {
	for {
		key, quit := k.queue.Get()
		if quit {
			return
		}
		after, err := k.syncKey(ctx, key)
		switch {
		case err != nil && ctx.Err() == nil:
			k.log.Info("pod sync failed; retrying", zap.String("pod", key), zap.Error(err))
			k.queue.AddRateLimited(key)
		case err == nil:
			k.queue.Forget(key)
			if after > 0 {
				k.queue.AddAfter(key, after)
			}
		}
		k.queue.Done(key)
	}
}

// fullRelistEvery is how many relist periods may pass with only the quick
// task-state check before the containers are listed anyway.
const fullRelistEvery = 10

// TaskChanges is implemented by a Runtime that reports task changes as
// they happen (containerd's task events). The relist then runs on each
// change and otherwise every eventedRelistFactor periods, as a safety net.
type TaskChanges interface {
	TaskChanges() <-chan struct{}
}

const eventedRelistFactor = 5

// minRelistGap spaces the relists that changes trigger: starts and exits
// come in bursts when many pods start or stop at once.
const minRelistGap = 200 * time.Millisecond

// relistLoop is kubelet's generic PLEG: it lists the runtime's containers
// and enqueues the pods whose containers changed state, every period or,
// with a runtime that reports TaskChanges, on each change. Each time it first
// compares the tasks' states with the last ones (one small call); the
// containers, whose records carry their whole spec, are listed only when
// a task appeared, went or changed state, and every fullRelistEvery periods.
func (k *Kubelet) relistLoop(ctx context.Context) {
	var changes <-chan struct{}
	period := k.cfg.RelistPeriod
	if tc, ok := k.cfg.Runtime.(TaskChanges); ok {
		changes, period = tc.TaskChanges(), eventedRelistFactor*period
	}
	t := time.NewTicker(period)
	defer t.Stop()
	var lastTasks map[string]runtime.State
	var last time.Time
	for quiet := 0; ; quiet++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-changes:
			select {
			case <-ctx.Done():
				return
			case <-time.After(minRelistGap - time.Since(last)):
			}
		}
		last = time.Now()
		tasks, err := k.cfg.Runtime.TaskStates(ctx)
		if err == nil && lastTasks != nil && maps.Equal(tasks, lastTasks) && quiet < fullRelistEvery {
			continue
		}
		lastTasks, quiet = tasks, 0
		list, err := k.cfg.Runtime.ListContainers(ctx, "")
		if err != nil {
			k.log.Debug("relist failed", zap.Error(err))
			continue
		}
		seen := map[string]runtime.State{}
		k.mu.Lock()
		for _, c := range list {
			seen[c.ID] = c.State
			if old, ok := k.relist[c.ID]; !ok || old != c.State {
				k.queue.Add(c.PodNamespace + "/" + c.PodName)
			}
		}
		k.relist = seen
		k.mu.Unlock()
	}
}

func (k *Kubelet) gcLoop(ctx context.Context) {
	t := time.NewTicker(k.cfg.SyncPeriod)
	defer t.Stop()
	for {
		k.collectOrphans(ctx)
		k.resyncAll() // refreshes configMap/secret volumes, as kubelet's periodic sync
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probeLoop re-syncs a pod when one of its probe results changed.
func (k *Kubelet) probeLoop(ctx context.Context) {
	ch := k.cfg.Probes.Updates()
	for {
		select {
		case <-ctx.Done():
			return
		case u, ok := <-ch:
			if !ok {
				return
			}
			k.mu.Lock()
			st := k.pods[u.PodUID]
			k.mu.Unlock()
			if st != nil {
				k.queue.Add(st.key)
			}
		}
	}
}

func (k *Kubelet) resyncAll() {
	pods, err := k.lister.List(everything)
	if err != nil {
		return
	}
	for _, p := range pods {
		k.queue.Add(p.Namespace + "/" + p.Name)
	}
}

// Pods returns the pods bound to this node from the informer's cache (for
// the kubelet API's stats); the objects must not be modified.
func (k *Kubelet) Pods() []*corev1.Pod {
	pods, _ := k.lister.List(labels.Everything())
	return pods
}

// GetPod returns a pod bound to this node from the informer's cache (for
// the kubelet API); the object must not be modified.
func (k *Kubelet) GetPod(namespace, name string) (*corev1.Pod, bool) {
	p, err := k.lister.Pods(namespace).Get(name)
	return p, err == nil
}
