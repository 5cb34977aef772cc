package daemonset

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultTolerations are the tolerations every daemon pod gets
// (upstream's AddOrUpdateDaemonPodTolerations).
func defaultTolerations(hostNetwork bool) []corev1.Toleration {
	exists := func(key string, e corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: e}
	}
	tols := []corev1.Toleration{
		exists(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute),
		exists(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute),
		exists(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule),
		exists(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule),
		exists(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule),
		exists(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule),
	}
	if hostNetwork {
		tols = append(tols, exists(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule))
	}
	return tols
}

// addTolerations adds or replaces (same key, operator, value and effect)
// the default tolerations in spec.
func addTolerations(spec *corev1.PodSpec) {
	for _, t := range defaultTolerations(spec.HostNetwork) {
		replaced := false
		for i := range spec.Tolerations {
			if spec.Tolerations[i].MatchToleration(&t) {
				spec.Tolerations[i] = t
				replaced = true
			}
		}
		if !replaced {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
}

// shouldRun reports whether a daemon pod should be placed on node and
// whether an existing one may keep running there (upstream's
// nodeShouldRunDaemonPod). spec must carry the default tolerations.
func shouldRun(node *corev1.Node, spec *corev1.PodSpec) (run, keep bool) {
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false, false
	}
	if !matchesSelector(node, spec.NodeSelector) || !matchesAffinity(node, spec.Affinity) {
		return false, false
	}
	if untolerated(node.Spec.Taints, spec.Tolerations, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute) {
		return false, !untolerated(node.Spec.Taints, spec.Tolerations, corev1.TaintEffectNoExecute)
	}
	return true, true
}

func matchesSelector(node *corev1.Node, sel map[string]string) bool {
	for k, v := range sel {
		if got, ok := node.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func matchesAffinity(node *corev1.Node, aff *corev1.Affinity) bool {
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, t := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if matchTerm(node, &t) {
			return true
		}
	}
	return false
}

// matchTerm: requirements are ANDed; an empty term matches nothing;
// matchFields supports only metadata.name (as component-helpers).
func matchTerm(node *corev1.Node, t *corev1.NodeSelectorTerm) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false
	}
	for _, r := range t.MatchExpressions {
		v, ok := node.Labels[r.Key]
		if !matchRequirement(r, v, ok) {
			return false
		}
	}
	for _, r := range t.MatchFields {
		if r.Key != metav1.ObjectNameField || !matchRequirement(r, node.Name, true) {
			return false
		}
	}
	return true
}

func matchRequirement(r corev1.NodeSelectorRequirement, v string, present bool) bool {
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return present && contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !present || !contains(r.Values, v)
	case corev1.NodeSelectorOpExists:
		return present
	case corev1.NodeSelectorOpDoesNotExist:
		return !present
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !present || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		return (r.Operator == corev1.NodeSelectorOpGt && have > want) || (r.Operator == corev1.NodeSelectorOpLt && have < want)
	}
	return false
}

func contains(vals []string, v string) bool {
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
}

// untolerated reports a taint with one of effects that no toleration tolerates.
func untolerated(taints []corev1.Taint, tols []corev1.Toleration, effects ...corev1.TaintEffect) bool {
	for i := range taints {
		if !contains(effectStrings(effects), string(taints[i].Effect)) {
			continue
		}
		if !tolerated(tols, &taints[i]) {
			return true
		}
	}
	return false
}

func effectStrings(es []corev1.TaintEffect) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e)
	}
	return out
}

func tolerated(tols []corev1.Toleration, taint *corev1.Taint) bool {
	for _, t := range tols {
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		if t.Key != "" && t.Key != taint.Key {
			continue
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			return true
		case "", corev1.TolerationOpEqual:
			if t.Value == taint.Value {
				return true
			}
		}
	}
	return false
}
