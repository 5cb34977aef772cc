package disruption

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func readyPod(name string, isReady bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if isReady {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}}
}

func TestCompute(t *testing.T) {
	now := time.Unix(1000, 0)
	three := []*corev1.Pod{readyPod("a", true), readyPod("b", true), readyPod("c", false)}
	pct := intstr.FromString("50%")
	one := intstr.FromInt32(1)
	cases := []struct {
		name     string
		spec     policyv1.PodDisruptionBudgetSpec
		expected int32
		disrupt  map[string]metav1.Time
		allowed  int32
		desired  int32
	}{
		{"minAvailable 1 of 2 healthy", policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}, -1, nil, 1, 1},
		{"maxUnavailable 1 of 3 expected", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one}, 3, nil, 0, 2},
		{"minAvailable 50% of 4 rounds up", policyv1.PodDisruptionBudgetSpec{MinAvailable: &pct}, 4, nil, 0, 2},
		{"recent eviction counts as gone", policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}, -1,
			map[string]metav1.Time{"a": metav1.NewTime(now.Add(-time.Minute))}, 0, 1},
		{"old eviction expired", policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}, -1,
			map[string]metav1.Time{"a": metav1.NewTime(now.Add(-3 * time.Minute))}, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{Spec: c.spec, Status: policyv1.PodDisruptionBudgetStatus{DisruptedPods: c.disrupt}}
			b := compute(pdb, three, c.expected, now)
			apply(pdb, b)
			if pdb.Status.DisruptionsAllowed != c.allowed || pdb.Status.DesiredHealthy != c.desired {
				t.Fatalf("status %+v", pdb.Status)
			}
			want := metav1.ConditionTrue
			if c.allowed == 0 {
				want = metav1.ConditionFalse
			}
			if pdb.Status.Conditions[0].Status != want {
				t.Fatalf("condition %+v", pdb.Status.Conditions)
			}
		})
	}
}
