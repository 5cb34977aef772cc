package nodelifecycle

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DisruptionTarget conditions put on pods before they are deleted, as the
// upstream taint-eviction and pod GC controllers do, so a Job's pod failure
// policy can tell these deletions from failures.
var (
	taintEvictionCondition = corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint"}
	podGCCondition = corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}
)

// markDisrupted writes cond on a copy of pod (and, with fail, the Failed
// phase of a pod that has not finished: its node is gone and will never
// report it). Nothing is written when the condition is already there.
func (c *Controller) markDisrupted(ctx context.Context, pod *corev1.Pod, cond corev1.PodCondition, fail bool) error {
	p := pod.DeepCopy()
	changed := setCondition(&p.Status, cond, c.clock.Now())
	if fail && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		p.Status.Phase, changed = corev1.PodFailed, true
	}
	if !changed {
		return nil
	}
	_, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("marking pod %s/%s disrupted: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// setCondition sets cond in st (transition time now unless the status stays)
// and tells whether anything changed.
func setCondition(st *corev1.PodStatus, cond corev1.PodCondition, now time.Time) bool {
	cond.LastTransitionTime = metav1.NewTime(now)
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			return false
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		*old = cond
		return true
	}
	st.Conditions = append(st.Conditions, cond)
	return true
}
