package apiserver

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNamespaceLifecycleGracefulPods: a pod running on an existing node is
// only marked (its agent finishes it); the namespace reports what remains
// in its conditions and goes once the pod is gone.
func TestNamespaceLifecycleGracefulPods(t *testing.T) {
	s, ctx := startNamespaceLifecycle(t)

	metaPut(t, s, "", "nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "grace"},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	metaPut(t, s, "", "namespaces", ns)
	metaPut(t, s, "", "pods", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "grace"},
		Spec: corev1.PodSpec{NodeName: "n1", TerminationGracePeriodSeconds: new(int64(7))}})
	now := metav1.Now()
	ns.DeletionTimestamp = &now
	ns.Status.Phase = corev1.NamespaceTerminating
	metaPut(t, s, "", "namespaces", ns)

	metaEventually(t, "pod marked with its grace period", func() bool {
		var p corev1.Pod
		metaGetStored(t, s, "", "pods", "grace", "p", &p)
		return p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 7
	})
	metaEventually(t, "ContentRemaining condition", func() bool {
		var got corev1.Namespace
		metaGetStored(t, s, "", "namespaces", "", "grace", &got)
		for _, c := range got.Status.Conditions {
			if c.Type == corev1.NamespaceContentRemaining {
				return c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "pods has 1 resource instances")
			}
		}
		return false
	})
	// The agent stops the pod and deletes it.
	var p corev1.Pod
	kv := metaGetStored(t, s, "", "pods", "grace", "p", &p)
	if _, _, err := s.cfg.Store.Delete(ctx, kv.Key, kv.ModRevision); err != nil {
		t.Fatal(err)
	}
	metaEventually(t, "namespace deleted", func() bool { return !metaExists(s, "", "namespaces", "", "grace") })
}
