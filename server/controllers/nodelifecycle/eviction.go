package nodelifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// evictionTime decides what taint eviction does with a pod on a node with
// taints: evict=false means the pod tolerates every NoExecute taint
// forever; otherwise the pod must go at `at` (now or later), the earliest
// time any untolerated-after-a-while taint runs out.
func evictionTime(pod *corev1.Pod, taints []corev1.Taint, now time.Time) (at time.Time, evict bool) {
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		secs, tolerated := tolerationSeconds(pod.Spec.Tolerations, t)
		if !tolerated {
			return now, true
		}
		if secs < 0 {
			continue
		}
		added := now
		if t.TimeAdded != nil {
			added = t.TimeAdded.Time
		}
		deadline := added.Add(time.Duration(secs) * time.Second)
		if !evict || deadline.Before(at) {
			at, evict = deadline, true
		}
	}
	return at, evict
}

// tolerationSeconds returns, as upstream's getMinTolerationTime, the
// smallest tolerationSeconds among the tolerations that tolerate t (-1 when
// none of them sets it: tolerated forever) and whether any tolerates t.
func tolerationSeconds(tols []corev1.Toleration, t *corev1.Taint) (int64, bool) {
	best, found := int64(-1), false
	for i := range tols {
		if !tolerates(&tols[i], t) {
			continue
		}
		found = true
		if s := tols[i].TolerationSeconds; s != nil && (best < 0 || max(*s, 0) < best) {
			best = max(*s, 0)
		}
	}
	return best, found
}

// tolerates is corev1.Toleration.ToleratesTaint without its logger.
func tolerates(tol *corev1.Toleration, t *corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case "", corev1.TolerationOpEqual:
		return tol.Value == t.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
