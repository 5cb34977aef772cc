package disruption

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

// TestEvictionHonoursBudget runs the controller against the real API
// server: with minAvailable 1 and two ready pods, the first eviction
// passes and the second is refused with 429 until a pod is ready again.
func TestEvictionHonoursBudget(t *testing.T) {
	cs, _ := kittest.Run(t, New)
	ctx := t.Context()

	for _, n := range []string{"p1", "p2"} {
		makeReadyPod(t, ctx, cs, n)
	}
	one := intstr.FromInt32(1)
	_, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, ctx, cs, 1)
	if err := evict(ctx, cs, "p1"); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	err = evict(ctx, cs, "p2")
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("second eviction: want 429, got %v", err)
	}
	if _, err := cs.CoreV1().Pods("default").Get(ctx, "p2", metav1.GetOptions{}); err != nil {
		t.Fatalf("the refused eviction deleted the pod: %v", err)
	}
}

func makeReadyPod(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) {
	t.Helper()
	p, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitAllowed(t *testing.T, ctx context.Context, cs kubernetes.Interface, want int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
		if err == nil && pdb.Status.DisruptionsAllowed == want && pdb.Status.ObservedGeneration == pdb.Generation {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("disruptionsAllowed never became %d: %+v %v", want, pdb, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func evict(ctx context.Context, cs kubernetes.Interface, name string) error {
	return cs.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
}
