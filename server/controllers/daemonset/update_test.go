package daemonset

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/server/controllers/history"
)

// TestReplaceInPlaceCountsNodesWithoutPods: a node whose old pod is gone
// and whose new one the cache does not show yet is unavailable, so with
// maxUnavailable 1 no other old pod goes (the DaemonSet rollback
// conformance spec saw two nodes replaced at once).
func TestReplaceInPlaceCountsNodesWithoutPods(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: "ns"}}
	ready := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}
	old := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{history.HashLabel: "old"}},
			Spec: corev1.PodSpec{NodeName: node}, Status: ready}
	}
	var nodes []*corev1.Node
	for _, n := range []string{"n1", "n2", "n3"} {
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	st := &state{ds: ds, key: "ns/ds", nodes: nodes, spec: &corev1.PodSpec{}, hash: "new",
		byNode: map[string][]*corev1.Pod{"n1": {old("a", "n1")}, "n3": {old("c", "n3")}}}
	c := &Controller{now: time.Now}
	if del := c.replaceInPlace(st, 1); len(del) != 0 {
		t.Fatalf("deleted %d old pods while n2 has none", len(del))
	}
	st.byNode["n2"] = []*corev1.Pod{old("b", "n2")}
	if del := c.replaceInPlace(st, 1); len(del) != 1 {
		t.Fatalf("deleted %d old pods with every node available, want 1", len(del))
	}
}
