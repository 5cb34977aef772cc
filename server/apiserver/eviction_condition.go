package apiserver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// evictionCondition is what the eviction subresource puts on a pod before
// deleting it (addConditionAndDeletePod in
// pkg/registry/core/pod/storage/eviction.go), so that Jobs' pod failure
// policies can tell a disruption from a failure.
func evictionCondition(now time.Time) corev1.PodCondition {
	return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.NewTime(now)}
}

// markEvicted adds the DisruptionTarget condition to the pod, honouring the
// eviction's uid and resourceVersion preconditions, and returns the options
// to delete it with: a resourceVersion precondition moves to the pod's new
// version, since this write made it.
func (s *Server) markEvicted(ctx context.Context, rc *reqCtx, opts *metav1.DeleteOptions) (*metav1.DeleteOptions, error) {
	res, err := s.guaranteedUpdate(ctx, rc, modeRaw, false, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		if err := checkEvictionPreconditions(rc, pod, opts.Preconditions); err != nil {
			return nil, err
		}
		setDisruptionCondition(&pod.Status, evictionCondition(time.Now()))
		pod.ResourceVersion = "" // unconditional: the preconditions were checked on this very read
		return pod, nil
	})
	if err != nil {
		return nil, err
	}
	if p := opts.Preconditions; p == nil || p.ResourceVersion == nil || *p.ResourceVersion == "" {
		return opts, nil
	}
	opts = opts.DeepCopy()
	rv := objectMeta(res.obj).GetResourceVersion()
	opts.Preconditions.ResourceVersion = &rv
	return opts, nil
}

func checkEvictionPreconditions(rc *reqCtx, pod *corev1.Pod, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
		return apierrors.NewConflict(rc.gr, pod.Name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
		return apierrors.NewConflict(rc.gr, pod.Name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion))
	}
	return nil
}

// setDisruptionCondition is podutil.UpdatePodCondition: the transition time
// only moves when the status changes.
func setDisruptionCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}
