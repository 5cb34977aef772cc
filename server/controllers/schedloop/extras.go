package schedloop

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/scheduler"
)

// Built-in priority classes (scheduling.k8s.io), as the API server has them.
var builtinPriorities = map[string]int32{
	"system-cluster-critical": 2000000000,
	"system-node-critical":    2000001000,
}

// withPriority fills spec.priority (and preemptionPolicy) from the named
// PriorityClass when admission did not; it returns a copy if it changes.
func (r *run) withPriority(pod *corev1.Pod) *corev1.Pod {
	if pod.Spec.Priority != nil || pod.Spec.PriorityClassName == "" {
		return pod
	}
	p := pod.DeepCopy()
	if v, ok := builtinPriorities[p.Spec.PriorityClassName]; ok {
		p.Spec.Priority = &v
	} else if pc, err := r.l.priorities.Get(p.Spec.PriorityClassName); err == nil {
		v := pc.Value
		p.Spec.Priority = &v
		if p.Spec.PreemptionPolicy == nil {
			p.Spec.PreemptionPolicy = pc.PreemptionPolicy
		}
	}
	return p
}

// storage lists what VolumeBinding reads.
func (r *run) storage() (*scheduler.Storage, error) {
	st := &scheduler.Storage{PVCs: map[string]*corev1.PersistentVolumeClaim{}, PVs: map[string]*corev1.PersistentVolume{},
		Classes: map[string]*storagev1.StorageClass{}}
	pvcs, err := r.l.pvcs.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, c := range pvcs {
		st.PVCs[c.Namespace+"/"+c.Name] = c
	}
	pvs, err := r.l.pvs.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, v := range pvs {
		st.PVs[v.Name] = v
	}
	classes, err := r.l.classes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, c := range classes {
		st.Classes[c.Name] = c
	}
	return st, nil
}

// selectNode sets volume.kubernetes.io/selected-node=node on each
// WaitForFirstConsumer claim (the provisioner's cue) before the bind.
func (r *run) selectNode(ctx context.Context, claims []string, node string) error {
	for _, k := range claims {
		ns, name, err := cache.SplitMetaNamespaceKey(k)
		if err != nil {
			continue
		}
		if c, err := r.l.pvcs.PersistentVolumeClaims(ns).Get(name); err == nil && c.Annotations[scheduler.AnnSelectedNode] == node {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"annotations": map[string]string{scheduler.AnnSelectedNode: node}}})
		if err != nil {
			return err
		}
		_, err = r.c.cfg.Client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("select node %s for claim %s: %w", node, k, err)
		}
	}
	return nil
}

// defaultSpreadSelector is upstream's helper.DefaultSelector: the Services
// selecting the pod (their selectors merged) plus the selectors of the
// ReplicaSets and StatefulSets selecting it.
func (r *run) defaultSpreadSelector(pod *corev1.Pod) labels.Selector {
	podLabels := labels.Set(pod.Labels)
	set := labels.Set{}
	if svcs, err := r.l.services.Services(pod.Namespace).List(labels.Everything()); err == nil {
		for _, s := range svcs {
			if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
				for k, v := range s.Spec.Selector {
					set[k] = v
				}
			}
		}
	}
	sel := labels.SelectorFromSet(set)
	add := func(ls *metav1.LabelSelector) {
		s, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil || s.Empty() || !s.Matches(podLabels) {
			return
		}
		if reqs, ok := s.Requirements(); ok {
			sel = sel.Add(reqs...)
		}
	}
	if rss, err := r.l.rss.ReplicaSets(pod.Namespace).List(labels.Everything()); err == nil {
		for _, rs := range rss {
			add(rs.Spec.Selector)
		}
	}
	if stss, err := r.l.stss.StatefulSets(pod.Namespace).List(labels.Everything()); err == nil {
		for _, s := range stss {
			add(s.Spec.Selector)
		}
	}
	return sel
}
