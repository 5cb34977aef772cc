package schedloop

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orch/orch/server/scheduler"
)

// run is the state of one Run. A single worker schedules; the informer
// handlers touch only the mutex-guarded maps and the queue.
type run struct {
	c        *Controller
	pods     corelisters.PodLister
	nodes    corelisters.NodeLister
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder

	mu            sync.Mutex
	assumed       map[string]*corev1.Pod // bound by us, cache not showing it yet
	unschedulable map[string]struct{}
}

func newRun(c *Controller, pods corelisters.PodLister, nodes corelisters.NodeLister,
	queue workqueue.TypedRateLimitingInterface[string], recorder record.EventRecorder) *run {
	return &run{c: c, pods: pods, nodes: nodes, queue: queue, recorder: recorder,
		assumed: map[string]*corev1.Pod{}, unschedulable: map[string]struct{}{}}
}

// pending reports whether this loop should schedule pod.
func pending(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" &&
		(pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == SchedulerName) &&
		pod.DeletionTimestamp == nil &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

func key(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

func (r *run) podHandlers() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				r.podChanged(nil, pod)
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Pod)
			n, ok2 := cur.(*corev1.Pod)
			if ok1 && ok2 {
				r.podChanged(o, n)
			}
		},
		DeleteFunc: func(obj any) {
			if k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				r.forget(k)
				r.queue.Forget(k)
				r.requeueUnschedulable()
			}
		},
	}
}

// podChanged queues a pending pod. An unschedulable pod is queued again
// only if its spec or labels changed (its own status update must not
// make it loop); a bound or finished pod leaves the caches.
func (r *run) podChanged(old, pod *corev1.Pod) {
	k := key(pod)
	if !pending(pod) {
		r.forget(k)
		return
	}
	r.mu.Lock()
	_, unsched := r.unschedulable[k]
	r.mu.Unlock()
	if unsched && old != nil && reflect.DeepEqual(old.Spec, pod.Spec) &&
		reflect.DeepEqual(old.Labels, pod.Labels) && reflect.DeepEqual(old.Annotations, pod.Annotations) {
		return
	}
	r.queue.Add(k)
}

// forget drops k from the assume cache and the unschedulable set.
func (r *run) forget(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.assumed, k)
	delete(r.unschedulable, k)
}

func (r *run) nodeHandlers() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { r.requeueUnschedulable() },
		UpdateFunc: func(any, any) { r.requeueUnschedulable() },
	}
}

// requeueUnschedulable queues every unschedulable pod with its back-off.
func (r *run) requeueUnschedulable() {
	r.mu.Lock()
	keys := make([]string, 0, len(r.unschedulable))
	for k := range r.unschedulable {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.queue.AddRateLimited(k)
	}
}

// snapshot builds a Snapshot from the caches plus the assumed pods the
// pod cache does not show bound yet (those that it does are expired).
func (r *run) snapshot() (*scheduler.Snapshot, error) {
	nodes, err := r.nodes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	pods, err := r.pods.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, ap := range r.assumed {
		cur, err := r.pods.Pods(ap.Namespace).Get(ap.Name)
		if err != nil || cur.UID != ap.UID || cur.Spec.NodeName != "" {
			delete(r.assumed, k)
			continue
		}
		pods = append(pods, ap)
	}
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	return scheduler.NewSnapshot(nodes, pods), nil
}
