package nodelifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionTaint maps a condition state to the taint keys it brings.
type conditionTaint struct {
	cond   corev1.NodeConditionType
	status corev1.ConditionStatus
	key    string
}

var conditionTaints = []conditionTaint{
	{corev1.NodeMemoryPressure, corev1.ConditionTrue, corev1.TaintNodeMemoryPressure},
	{corev1.NodeDiskPressure, corev1.ConditionTrue, corev1.TaintNodeDiskPressure},
	{corev1.NodePIDPressure, corev1.ConditionTrue, corev1.TaintNodePIDPressure},
	{corev1.NodeNetworkUnavailable, corev1.ConditionTrue, corev1.TaintNodeNetworkUnavailable},
}

// managedKeys are the taint keys this controller owns.
var managedKeys = map[string]bool{
	corev1.TaintNodeNotReady: true, corev1.TaintNodeUnreachable: true, corev1.TaintNodeUnschedulable: true,
	corev1.TaintNodeMemoryPressure: true, corev1.TaintNodeDiskPressure: true, corev1.TaintNodePIDPressure: true,
	corev1.TaintNodeNetworkUnavailable: true,
}

// desiredTaints returns the managed taints node should carry (without
// timeAdded), from its conditions and spec.unschedulable.
func desiredTaints(node *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	switch readyStatus(node) {
	case corev1.ConditionFalse:
		out = append(out, taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoSchedule),
			taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute))
	case corev1.ConditionUnknown:
		out = append(out, taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule),
			taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute))
	}
	for _, ct := range conditionTaints {
		if c := condition(node, ct.cond); c != nil && c.Status == ct.status {
			out = append(out, taint(ct.key, corev1.TaintEffectNoSchedule))
		}
	}
	if node.Spec.Unschedulable {
		out = append(out, taint(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule))
	}
	return out
}

func taint(key string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Effect: effect}
}

// mergeTaints replaces the managed taints of current with want, keeping
// every other taint and the timeAdded of managed taints that stay. It
// reports whether anything changed.
func mergeTaints(current, want []corev1.Taint, now time.Time) ([]corev1.Taint, bool) {
	var out []corev1.Taint
	kept := map[corev1.Taint]bool{}
	for _, t := range current {
		if !managedKeys[t.Key] {
			out = append(out, t)
			continue
		}
		if containsTaint(want, t) && !kept[corev1.Taint{Key: t.Key, Effect: t.Effect}] {
			kept[corev1.Taint{Key: t.Key, Effect: t.Effect}] = true
			out = append(out, t)
		}
	}
	changed := len(out) != len(current)
	for _, t := range want {
		if kept[t] {
			continue
		}
		if t.Effect == corev1.TaintEffectNoExecute {
			added := metav1.NewTime(now)
			t.TimeAdded = &added
		}
		out = append(out, t)
		changed = true
	}
	return out, changed
}

func containsTaint(ts []corev1.Taint, t corev1.Taint) bool {
	for _, x := range ts {
		if x.Key == t.Key && x.Effect == t.Effect {
			return true
		}
	}
	return false
}

func condition(node *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == typ {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// readyStatus is the node's Ready status (Unknown when it has none).
func readyStatus(node *corev1.Node) corev1.ConditionStatus {
	if c := condition(node, corev1.NodeReady); c != nil {
		return c.Status
	}
	return corev1.ConditionUnknown
}
