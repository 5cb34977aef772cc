package scheduler

import corev1 "k8s.io/api/core/v1"

// toleratesTaint is corev1 Toleration.ToleratesTaint.
func toleratesTaint(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		return t.Value == taint.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}

func tolerated(tols []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tols {
		if toleratesTaint(&tols[i], taint) {
			return true
		}
	}
	return false
}

// firstUntoleratedTaint returns the first taint with one of effects that
// the tolerations do not tolerate, or nil.
func firstUntoleratedTaint(taints []corev1.Taint, tols []corev1.Toleration, effects ...corev1.TaintEffect) *corev1.Taint {
	for i := range taints {
		t := &taints[i]
		if !hasEffect(effects, t.Effect) {
			continue
		}
		if !tolerated(tols, t) {
			return t
		}
	}
	return nil
}

func hasEffect(effects []corev1.TaintEffect, e corev1.TaintEffect) bool {
	for _, x := range effects {
		if x == e {
			return true
		}
	}
	return false
}

// countIntolerablePreferNoSchedule counts PreferNoSchedule taints not
// tolerated by the pod's PreferNoSchedule (or effect-less) tolerations.
func countIntolerablePreferNoSchedule(taints []corev1.Taint, tols []corev1.Toleration) int64 {
	var n int64
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule && !tolerated(tols, t) {
			n++
		}
	}
	return n
}
