package replicaset

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// PodOwnerIndex indexes pods by their controller's UID; orphans go under
// OrphanIndexKey(namespace).
const PodOwnerIndex = "orch.io/replicaset-pod-owner"

// OrphanIndexKey is the PodOwnerIndex key of a namespace's orphan pods.
func OrphanIndexKey(ns string) string { return "orphan/" + ns }

// AddPodOwnerIndex adds PodOwnerIndex to the pod informer unless present.
func AddPodOwnerIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[PodOwnerIndex]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{PodOwnerIndex: func(obj any) ([]string, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, nil
		}
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
			return []string{string(ref.UID)}, nil
		}
		return []string{OrphanIndexKey(pod.Namespace)}, nil
	}})
}

// PodsOwnedBy lists the cached pods whose controller is uid, plus the
// namespace's orphans when orphans is set.
func PodsOwnedBy(idx cache.Indexer, ns string, uid types.UID, orphans bool) ([]*corev1.Pod, error) {
	keys := []string{string(uid)}
	if orphans {
		keys = append(keys, OrphanIndexKey(ns))
	}
	var out []*corev1.Pod
	for _, k := range keys {
		objs, err := idx.ByIndex(PodOwnerIndex, k)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok && p.Namespace == ns {
				out = append(out, p)
			}
		}
	}
	return out, nil
}
