package pvbinder

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// NodeAffinityAdmits reports whether node passes pv's required node
// affinity (no affinity admits every node). Terms are ORed, the
// expressions and fields of a term ANDed, as upstream evaluates them.
func NodeAffinityAdmits(pv *corev1.PersistentVolume, node *corev1.Node) bool {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return true
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		if termMatches(term, node) {
			return true
		}
	}
	return false
}

func termMatches(term corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for _, e := range term.MatchExpressions {
		if !requirementMatches(e, labels.Set(node.Labels)) {
			return false
		}
	}
	for _, f := range term.MatchFields {
		if f.Key != "metadata.name" || !requirementMatches(f, labels.Set{"metadata.name": node.Name}) {
			return false
		}
	}
	return true
}

var operators = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
	corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt: selection.GreaterThan, corev1.NodeSelectorOpLt: selection.LessThan,
}

func requirementMatches(e corev1.NodeSelectorRequirement, set labels.Set) bool {
	op, ok := operators[e.Operator]
	if !ok {
		return false
	}
	vals := e.Values
	if op == selection.GreaterThan || op == selection.LessThan {
		if len(vals) != 1 {
			return false
		}
		if _, err := strconv.ParseInt(vals[0], 10, 64); err != nil {
			return false
		}
	}
	r, err := labels.NewRequirement(e.Key, op, vals)
	if err != nil {
		return false
	}
	return r.Matches(set)
}
