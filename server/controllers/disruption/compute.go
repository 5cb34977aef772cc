package disruption

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// deletionTimeout is how long an eviction's disruptedPods entry counts.
const deletionTimeout = 2 * time.Minute

// budget is the computed status of one PDB.
type budget struct {
	expected, healthy, desired int32
	disrupted                  map[string]metav1.Time
	nextCheck                  time.Duration // > 0: recompute then (an entry expires)
}

// compute derives a budget from the matching pods and the replicas their
// controllers ask for (expected; <0 = unknown, count the pods).
func compute(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod, expected int32, now time.Time) budget {
	b := budget{disrupted: map[string]metav1.Time{}}
	live := map[string]*corev1.Pod{}
	for _, p := range pods {
		live[p.Name] = p
	}
	for name, t := range pdb.Status.DisruptedPods {
		p := live[name]
		if p == nil || p.DeletionTimestamp != nil {
			continue
		}
		if left := t.Add(deletionTimeout).Sub(now); left > 0 {
			b.disrupted[name] = t
			if b.nextCheck == 0 || left < b.nextCheck {
				b.nextCheck = left
			}
		}
	}
	for _, p := range pods {
		if p.DeletionTimestamp == nil && ready(p) {
			if _, gone := b.disrupted[p.Name]; !gone {
				b.healthy++
			}
		}
	}
	if expected < 0 {
		expected = int32(len(pods))
	}
	b.expected = expected
	b.desired = desiredHealthy(pdb.Spec, expected)
	return b
}

// desiredHealthy is how many pods must stay healthy.
func desiredHealthy(spec policyv1.PodDisruptionBudgetSpec, expected int32) int32 {
	switch {
	case spec.MaxUnavailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return expected
		}
		return max(expected-int32(n), 0)
	case spec.MinAvailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, int(expected), true)
		if err != nil {
			return expected
		}
		return int32(n)
	}
	return expected
}

// apply writes b into pdb's status.
func apply(pdb *policyv1.PodDisruptionBudget, b budget) {
	st := &pdb.Status
	st.ExpectedPods, st.CurrentHealthy, st.DesiredHealthy = b.expected, b.healthy, b.desired
	st.DisruptionsAllowed = max(b.healthy-b.desired, 0)
	if b.expected == 0 {
		st.DisruptionsAllowed = 0
	}
	st.DisruptedPods = nil
	if len(b.disrupted) > 0 {
		st.DisruptedPods = b.disrupted
	}
	st.ObservedGeneration = pdb.Generation
	cond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue,
		Reason: policyv1.SufficientPodsReason, ObservedGeneration: pdb.Generation}
	if st.DisruptionsAllowed == 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	}
	setCondition(&st.Conditions, cond)
}

func setCondition(conds *[]metav1.Condition, c metav1.Condition) {
	for i := range *conds {
		old := &(*conds)[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = metav1.Now()
		}
		*old = c
		return
	}
	c.LastTransitionTime = metav1.Now()
	*conds = append(*conds, c)
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
