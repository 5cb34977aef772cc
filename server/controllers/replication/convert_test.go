package replication

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestConvertRoundTrip: an RC survives the trip through its ReplicaSet
// view, conditions included.
func TestConvertRoundTrip(t *testing.T) {
	rc := newRC("web", 3)
	rc.Namespace, rc.UID, rc.Generation, rc.Spec.MinReadySeconds = "ns", "u1", 4, 5
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 1,
		AvailableReplicas: 1, ObservedGeneration: 3, Conditions: []corev1.ReplicationControllerCondition{{
			Type: corev1.ReplicationControllerReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.Unix(100, 0), Reason: "FailedCreate", Message: "exceeded quota"}}}
	rs := toReplicaSet(rc)
	if rs.Spec.Selector.MatchLabels["app"] != "web" || *rs.Spec.Replicas != 3 || rs.Status.Conditions[0].Reason != "FailedCreate" {
		t.Fatalf("view %+v", rs)
	}
	back := fromReplicaSet(rs)
	back.TypeMeta = rc.TypeMeta
	if !apiequality.Semantic.DeepEqual(rc, back) {
		t.Fatalf("round trip:\n%+v\nwant\n%+v", back, rc)
	}
}

// TestEmptySelectorSelectsNothing: an RC without selector must not become
// a ReplicaSet selecting every pod.
func TestEmptySelectorSelectsNothing(t *testing.T) {
	rc := newRC("web", 1)
	rc.Spec.Selector = map[string]string{}
	if rs := toReplicaSet(rc); rs.Spec.Selector != nil {
		t.Fatalf("selector %+v", rs.Spec.Selector)
	}
}
