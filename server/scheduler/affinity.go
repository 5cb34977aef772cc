package scheduler

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// matchNodeSelectorTerms reports whether node matches any of the terms
// (terms are ORed; a term's requirements are ANDed; an empty term matches
// nothing), as component-helpers nodeaffinity.
func matchNodeSelectorTerms(node *corev1.Node, terms []corev1.NodeSelectorTerm) bool {
	for i := range terms {
		if matchTerm(node, &terms[i]) {
			return true
		}
	}
	return false
}

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
		if r.Key != "metadata.name" || !fieldOperator(r.Operator) || len(r.Values) != 1 {
			return false
		}
		if !matchRequirement(r, node.Name, true) {
			return false
		}
	}
	return true
}

// fieldOperator: matchFields only supports In and NotIn (with exactly one
// value) upstream; anything else makes the term match nothing.
func fieldOperator(op corev1.NodeSelectorOperator) bool {
	return op == corev1.NodeSelectorOpIn || op == corev1.NodeSelectorOpNotIn
}

// matchRequirement follows labels.Requirement: a malformed requirement
// (In/NotIn without values, Exists/DoesNotExist with values, Gt/Lt without
// exactly one integer) matches nothing, as a parse error does upstream.
func matchRequirement(r corev1.NodeSelectorRequirement, v string, present bool) bool {
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return len(r.Values) > 0 && present && contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return len(r.Values) > 0 && (!present || !contains(r.Values, v))
	case corev1.NodeSelectorOpExists:
		return len(r.Values) == 0 && present
	case corev1.NodeSelectorOpDoesNotExist:
		return len(r.Values) == 0 && !present
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		return present && compareInt(r, v)
	}
	return false
}

func compareInt(r corev1.NodeSelectorRequirement, v string) bool {
	if len(r.Values) != 1 {
		return false
	}
	want, err := strconv.ParseInt(r.Values[0], 10, 64)
	if err != nil {
		return false
	}
	got, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false
	}
	if r.Operator == corev1.NodeSelectorOpGt {
		return got > want
	}
	return got < want
}

func contains(vals []string, v string) bool {
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
}

// podMatchesNodeSelectorAndAffinity is upstream's required node
// affinity check: spec.nodeSelector and
// requiredDuringSchedulingIgnoredDuringExecution must both match.
func podMatchesNodeSelectorAndAffinity(pod *corev1.Pod, node *corev1.Node) bool {
	for k, v := range pod.Spec.NodeSelector {
		if lv, ok := node.Labels[k]; !ok || lv != v {
			return false
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	return matchNodeSelectorTerms(node, a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
}

// preferredAffinityScore sums the weights of matching preferred terms.
func preferredAffinityScore(pod *corev1.Pod, node *corev1.Node) int64 {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return 0
	}
	var score int64
	for _, t := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if t.Weight != 0 && matchTerm(node, &t.Preference) {
			score += int64(t.Weight)
		}
	}
	return score
}
