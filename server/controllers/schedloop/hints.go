package schedloop

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/scheduler"
)

// hint is a set of cluster events that may make an unschedulable pod
// schedulable (upstream's queueing hints, coarser): only those requeue it.
type hint uint8

const (
	hintNode        hint = 1 << iota // a node was added or changed what scheduling reads
	hintPodDeleted                   // resources, ports, anti-affinity freed
	hintAssignedPod                  // a pod was bound or relabelled (pod affinity, spread)
	hintVolume                       // a PVC, PV or StorageClass changed
	hintPDB                          // a PodDisruptionBudget changed (preemption)
	hintNamespace                    // namespace labels (affinity namespaceSelector)
	hintPriority                     // a PriorityClass the pod names appeared
)

// hintsFor returns the events worth retrying pod on.
func hintsFor(pod *corev1.Pod) hint {
	h := hintNode | hintPodDeleted
	if a := pod.Spec.Affinity; a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		h |= hintAssignedPod | hintNamespace
	}
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		h |= hintAssignedPod
	}
	if hasClaims(pod) {
		h |= hintVolume
	}
	if scheduler.PodPriority(pod) > 0 {
		h |= hintPDB
	}
	if pod.Spec.Priority == nil && pod.Spec.PriorityClassName != "" {
		h |= hintPriority
	}
	return h
}

func (r *run) podHandlers() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				r.markPod(nil, pod)
				r.podChanged(nil, pod)
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Pod)
			n, ok2 := cur.(*corev1.Pod)
			if ok1 && ok2 {
				r.markPod(o, n)
				r.podChanged(o, n)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				r.markNode(pod.Spec.NodeName, false)
			}
			if k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				r.forget(k)
				r.queue.Forget(k)
				r.requeue(hintPodDeleted)
			}
		},
	}
}

// podChanged queues a pending pod. An unschedulable pod is queued again
// only if its spec or labels changed (its own status update must not
// make it loop); a bound or finished pod leaves the caches, and a newly
// bound or relabelled pod requeues pods waiting on pod affinity/spread.
func (r *run) podChanged(old, pod *corev1.Pod) {
	k := key(pod)
	// An update without a nominated node keeps the room preemption reserved
	// in memory (upstream's nominator): it may predate the status write.
	switch {
	case !pending(pod):
		r.nominate(k, "")
	case pod.Status.NominatedNodeName != "":
		r.nominate(k, pod.Status.NominatedNodeName)
	}
	if !pending(pod) {
		r.forget(k)
		if pod.Spec.NodeName != "" && (old == nil || old.Spec.NodeName == "" || !reflect.DeepEqual(old.Labels, pod.Labels)) {
			r.requeue(hintAssignedPod)
		}
		if old != nil && old.DeletionTimestamp == nil && pod.DeletionTimestamp != nil {
			r.requeue(hintPodDeleted) // terminating: nominated preemptors re-check
		}
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

func (r *run) nodeHandlers() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*corev1.Node); ok {
				r.markNode(n.Name, true)
			}
			r.requeue(hintNode)
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Node)
			n, ok2 := cur.(*corev1.Node)
			if ok2 {
				r.markNode(n.Name, false)
			}
			if !ok1 || !ok2 || nodeSchedulingChanged(o, n) {
				r.requeue(hintNode)
			}
		},
		DeleteFunc: func(obj any) {
			if k, ok := kitKey(obj); ok {
				r.markNode(k, true)
			}
		},
	}
}

// nodeSchedulingChanged ignores heartbeats: only what the filters read.
func nodeSchedulingChanged(o, n *corev1.Node) bool {
	return !reflect.DeepEqual(o.Labels, n.Labels) || !reflect.DeepEqual(o.Spec.Taints, n.Spec.Taints) ||
		o.Spec.Unschedulable != n.Spec.Unschedulable || !reflect.DeepEqual(o.Status.Allocatable, n.Status.Allocatable)
}

// requeueOn requeues the pods waiting for h on any add, update or delete.
func (r *run) requeueOn(h hint) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { r.requeue(h) },
		UpdateFunc: func(any, any) { r.requeue(h) },
		DeleteFunc: func(any) { r.requeue(h) },
	}
}

const numHints = 7

// eventCounts are per-hint counters of the cluster events seen so far.
type eventCounts [numHints]uint64

func (r *run) counts() eventCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events
}

// missed reports whether an event in h came after before was taken: a
// pod marked unschedulable from an older snapshot must be retried.
func (r *run) missed(before eventCounts, h hint) bool {
	now := r.counts()
	for i := range numHints {
		if h&(1<<i) != 0 && now[i] != before[i] {
			return true
		}
	}
	return false
}

// requeue queues, with their back-off, the unschedulable pods waiting
// for one of the events in h.
func (r *run) requeue(h hint) {
	r.mu.Lock()
	for i := range numHints {
		if h&(1<<i) != 0 {
			r.events[i]++
		}
	}
	keys := make([]string, 0, len(r.unschedulable))
	for k, want := range r.unschedulable {
		if want&h != 0 {
			keys = append(keys, k)
		}
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.queue.AddRateLimited(k)
	}
}

// kitKey is the cache key of obj (tombstones included).
func kitKey(obj any) (string, bool) {
	k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return k, err == nil
}
