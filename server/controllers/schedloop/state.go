package schedloop

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	schedlisters "k8s.io/client-go/listers/scheduling/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/scheduler"
)

// listers are the caches the loop reads.
type listers struct {
	pods       corelisters.PodLister
	nodes      corelisters.NodeLister
	namespaces corelisters.NamespaceLister
	pvcs       corelisters.PersistentVolumeClaimLister
	pvs        corelisters.PersistentVolumeLister
	classes    storagelisters.StorageClassLister
	pdbs       policylisters.PodDisruptionBudgetLister
	priorities schedlisters.PriorityClassLister
	services   corelisters.ServiceLister
	rss        appslisters.ReplicaSetLister
	stss       appslisters.StatefulSetLister
}

// run is the state of one Run. A single worker schedules; the informer
// handlers touch only the mutex-guarded maps and the queue.
type run struct {
	c        *Controller
	l        listers
	sched    scheduler.Config
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder

	mu            sync.Mutex
	assumed       map[string]*corev1.Pod // bound by us, cache not showing it yet
	unschedulable map[string]hint        // waiting for one of these events
	events        eventCounts            // events seen, for those in flight
	written       map[string]string      // PodScheduled message (and nomination) last written
	// nominated is the nominator: pending pods' nominated nodes, from
	// status.nominatedNodeName or set by preemption before the victims go
	// (the status lands in the cache later; until then the room is kept).
	nominated    map[string]string
	dirty        map[string]bool // nodes whose NodeInfo must be rebuilt
	nodesChanged bool

	cache   nodeCache // worker only
	podsIdx cache.Indexer

	synced   []cache.InformerSynced
	m        *schedMetrics
	binding  chan struct{} // bounds the bindings in flight
	inflight sync.WaitGroup
}

// maxBindings is how many bindings may be in flight at once.
const maxBindings = 16

// register builds a run on kc's informers and adds the event handlers.
func (c *Controller) register(kc *kit.Context) (*run, error) {
	f := kc.Informers
	core, storage := f.Core().V1(), f.Storage().V1()
	r := &run{c: c, sched: c.cfg.Scheduler,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(c.limiter(), kc.QueueConfig(controllerName)),
		recorder: kc.Recorder(SchedulerName),
		assumed:  map[string]*corev1.Pod{}, unschedulable: map[string]hint{}, written: map[string]string{}, dirty: map[string]bool{},
		nominated: map[string]string{},
		cache:     nodeCache{infos: map[string]*scheduler.NodeInfo{}}, binding: make(chan struct{}, maxBindings),
		l: listers{pods: core.Pods().Lister(), nodes: core.Nodes().Lister(), namespaces: core.Namespaces().Lister(),
			pvcs: core.PersistentVolumeClaims().Lister(), pvs: core.PersistentVolumes().Lister(),
			classes: storage.StorageClasses().Lister(), pdbs: f.Policy().V1().PodDisruptionBudgets().Lister(),
			priorities: f.Scheduling().V1().PriorityClasses().Lister(), services: core.Services().Lister(),
			rss: f.Apps().V1().ReplicaSets().Lister(), stss: f.Apps().V1().StatefulSets().Lister()},
	}
	var err error
	if r.m, err = newSchedMetrics(kc.Options.Metrics, r); err != nil {
		return nil, fmt.Errorf("schedloop: metrics: %w", err)
	}
	if err := core.Pods().Informer().AddIndexers(cache.Indexers{podsByNode: podNodeIndex}); err != nil {
		return nil, fmt.Errorf("schedloop: pod index: %w", err)
	}
	r.podsIdx = core.Pods().Informer().GetIndexer()
	if r.sched.DefaultSpreadSelector == nil {
		r.sched.DefaultSpreadSelector = r.defaultSpreadSelector
	}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{core.Pods().Informer(), r.podHandlers()},
		{core.Nodes().Informer(), r.nodeHandlers()},
		{core.Namespaces().Informer(), r.requeueOn(hintNamespace)},
		{core.PersistentVolumeClaims().Informer(), r.requeueOn(hintVolume)},
		{core.PersistentVolumes().Informer(), r.requeueOn(hintVolume)},
		{storage.StorageClasses().Informer(), r.requeueOn(hintVolume)},
		{f.Policy().V1().PodDisruptionBudgets().Informer(), r.requeueOn(hintPDB)},
		{f.Scheduling().V1().PriorityClasses().Informer(), r.requeueOn(hintPriority)},
		{core.Services().Informer(), nil},
		{f.Apps().V1().ReplicaSets().Informer(), nil},
		{f.Apps().V1().StatefulSets().Informer(), nil},
	}
	for _, h := range handlers {
		r.synced = append(r.synced, h.inf.HasSynced)
		if h.h == nil {
			continue
		}
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			return nil, fmt.Errorf("schedloop: %w", err)
		}
	}
	return r, nil
}

// pending reports whether this loop should schedule pod (scheduling
// gates hold it back until they are removed, as upstream's SchedulingGates).
func pending(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" && len(pod.Spec.SchedulingGates) == 0 &&
		(pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == SchedulerName) &&
		pod.DeletionTimestamp == nil &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

func key(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// forget drops k from the assume cache and the unschedulable set.
func (r *run) forget(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.assumed, k)
	delete(r.unschedulable, k)
	delete(r.written, k)
	delete(r.nominated, k)
}

// nominate records in memory that pod's room is on node ("" drops it).
func (r *run) nominate(k, node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if node == "" {
		delete(r.nominated, k)
		return
	}
	r.nominated[k] = node
}

// expireAssumed drops assumed pods the pod cache shows bound (or gone),
// marking their nodes dirty, and returns the ones still pending.
func (r *run) expireAssumed() []*corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*corev1.Pod
	for k, ap := range r.assumed {
		cur, err := r.l.pods.Pods(ap.Namespace).Get(ap.Name)
		if err != nil || cur.UID != ap.UID || cur.Spec.NodeName != "" {
			delete(r.assumed, k)
			r.dirty[ap.Spec.NodeName] = true
			continue
		}
		out = append(out, ap)
	}
	return out
}

// snapshot builds a Snapshot for pod from the node cache plus the
// assumed pods the pod cache does not show bound yet (those that it does
// are expired), and the pods nominated (by preemption) with at least
// pod's priority.
func (r *run) snapshot(pod *corev1.Pod) (*scheduler.Snapshot, error) {
	// Expire first: the pod cache's indexer shows a binding before the
	// event handler marks its node dirty, so a pod dropped from the assume
	// cache must have its node rebuilt now or it would be counted nowhere
	// (two pods of a spread constraint then land on one node).
	assumed := r.expireAssumed()
	infos, err := r.refresh(r.podsIdx)
	if err != nil {
		return nil, err
	}
	snap := scheduler.NewSnapshotFromInfos(infos)
	extra := append(r.nominatedPods(pod), assumed...)
	for _, p := range extra {
		_ = snap.AssumePod(p, p.Spec.NodeName) // a vanished node: nothing to hold
	}
	if snap.NamespaceLabels, err = r.namespaceLabels(); err != nil {
		return nil, err
	}
	if hasClaims(pod) {
		if snap.Storage, err = r.storage(); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// nominatedPods returns copies, placed on their nominated node, of the
// pending pods other than pod that preemption made room for and that
// pod must not take the room of (priority >= pod's).
func (r *run) nominatedPods(pod *corev1.Pod) []*corev1.Pod {
	r.mu.Lock()
	nodes := make(map[string]string, len(r.nominated))
	for k, n := range r.nominated {
		nodes[k] = n
	}
	r.mu.Unlock()
	var out []*corev1.Pod
	prio := scheduler.PodPriority(pod)
	for k, node := range nodes {
		ns, name, _ := cache.SplitMetaNamespaceKey(k)
		p, err := r.l.pods.Pods(ns).Get(name)
		if err != nil || !pending(p) || k == key(pod) || scheduler.PodPriority(p) < prio {
			continue
		}
		c := p.DeepCopy()
		c.Spec.NodeName = node
		out = append(out, c)
	}
	return out
}

func (r *run) namespaceLabels() (map[string]map[string]string, error) {
	nss, err := r.l.namespaces.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]string, len(nss))
	for _, ns := range nss {
		out[ns.Name] = ns.Labels
	}
	return out, nil
}

func hasClaims(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return true
		}
	}
	return false
}
