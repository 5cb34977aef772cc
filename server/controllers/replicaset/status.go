package replicaset

import (
	"context"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// statusUpdateRetries is how often a conflicting status write is retried
// on a fresh read before the key is requeued (upstream: 1).
const statusUpdateRetries = 1

// calculateStatus counts the active and terminating pods; a create or delete error sets
// ReplicaFailure (FailedCreate/FailedDelete), success clears it.
func calculateStatus(rs *appsv1.ReplicaSet, active, terminating []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	st := *rs.Status.DeepCopy()
	tmpl := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	var full, ready, avail int32
	for _, p := range active {
		if tmpl.Matches(labels.Set(p.Labels)) {
			full++
		}
		if PodReady(p) {
			ready++
			if PodAvailable(p, rs.Spec.MinReadySeconds, now) {
				avail++
			}
		}
	}
	failure := getCondition(st, appsv1.ReplicaSetReplicaFailure)
	switch {
	case manageErr != nil && failure == nil:
		reason := ""
		if diff := len(active) - int(*rs.Spec.Replicas); diff < 0 {
			reason = "FailedCreate"
		} else if diff > 0 {
			reason = "FailedDelete"
		}
		st.Conditions = append(st.Conditions, appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure,
			Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: manageErr.Error()})
	case manageErr == nil && failure != nil:
		st.Conditions = withoutCondition(st.Conditions, appsv1.ReplicaSetReplicaFailure)
	}
	st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = int32(len(active)), full, ready, avail
	st.TerminatingReplicas = ptr.To(int32(len(terminating)))
	return st
}

func getCondition(st appsv1.ReplicaSetStatus, t appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func withoutCondition(cs []appsv1.ReplicaSetCondition, t appsv1.ReplicaSetConditionType) []appsv1.ReplicaSetCondition {
	var out []appsv1.ReplicaSetCondition
	for _, c := range cs {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

// updateStatus writes st (with observedGeneration) unless nothing changed,
// retrying once on a fresh read.
func (c *Controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	if rs.Generation == rs.Status.ObservedGeneration && statusEqual(rs.Status, st) {
		return rs, nil
	}
	st.ObservedGeneration = rs.Generation
	for i := 0; ; i++ {
		rs.Status = st
		out, err := c.owners.UpdateStatus(ctx, rs)
		if err == nil || i >= statusUpdateRetries {
			return out, err
		}
		if rs, err = c.owners.Fetch(ctx, rs.Namespace, rs.Name); err != nil {
			return nil, err
		}
	}
}

func statusEqual(a, b appsv1.ReplicaSetStatus) bool {
	return a.Replicas == b.Replicas && a.FullyLabeledReplicas == b.FullyLabeledReplicas &&
		a.ReadyReplicas == b.ReadyReplicas && a.AvailableReplicas == b.AvailableReplicas &&
		ptr.Equal(a.TerminatingReplicas, b.TerminatingReplicas) &&
		reflect.DeepEqual(a.Conditions, b.Conditions)
}
