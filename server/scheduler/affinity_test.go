package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

type affinityCase struct {
	name string
	opt  podOpt
	fits bool
}

// nodeAffinityCases run against node n1 labelled zone=a, gen=5, disk=ssd.
func nodeAffinityCases() []affinityCase {
	field := func(op corev1.NodeSelectorOperator, vals ...string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: op, Values: vals}}}
	}
	return []affinityCase{
		{"no constraints", func(*corev1.Pod) {}, true},
		{"nodeSelector match", withNodeSelector("zone", "a"), true},
		{"nodeSelector mismatch", withNodeSelector("zone", "b"), false},
		{"nodeSelector missing label", withNodeSelector("gpu", "true"), false},
		{"In", withRequired(expr("zone", corev1.NodeSelectorOpIn, "b", "a")), true},
		{"In mismatch", withRequired(expr("zone", corev1.NodeSelectorOpIn, "b")), false},
		{"NotIn", withRequired(expr("zone", corev1.NodeSelectorOpNotIn, "b")), true},
		{"NotIn mismatch", withRequired(expr("zone", corev1.NodeSelectorOpNotIn, "a")), false},
		{"NotIn absent label", withRequired(expr("rack", corev1.NodeSelectorOpNotIn, "r1")), true},
		{"Exists", withRequired(expr("disk", corev1.NodeSelectorOpExists)), true},
		{"Exists absent", withRequired(expr("gpu", corev1.NodeSelectorOpExists)), false},
		{"DoesNotExist", withRequired(expr("gpu", corev1.NodeSelectorOpDoesNotExist)), true},
		{"DoesNotExist present", withRequired(expr("disk", corev1.NodeSelectorOpDoesNotExist)), false},
		{"Gt", withRequired(expr("gen", corev1.NodeSelectorOpGt, "4")), true},
		{"Gt equal", withRequired(expr("gen", corev1.NodeSelectorOpGt, "5")), false},
		{"Lt", withRequired(expr("gen", corev1.NodeSelectorOpLt, "6")), true},
		{"Lt not integer", withRequired(expr("zone", corev1.NodeSelectorOpLt, "6")), false},
		{"Gt absent", withRequired(expr("rack", corev1.NodeSelectorOpGt, "1")), false},
		{"terms ORed", withRequired(expr("zone", corev1.NodeSelectorOpIn, "b"), expr("disk", corev1.NodeSelectorOpIn, "ssd")), true},
		{"empty term matches nothing", withRequired(corev1.NodeSelectorTerm{}), false},
		{"matchFields In", withRequired(field(corev1.NodeSelectorOpIn, "n1")), true},
		{"matchFields In other", withRequired(field(corev1.NodeSelectorOpIn, "n2")), false},
		{"matchFields NotIn", withRequired(field(corev1.NodeSelectorOpNotIn, "n2")), true},
		{"matchFields two values invalid", withRequired(field(corev1.NodeSelectorOpIn, "n1", "n2")), false},
		{"matchFields Exists unsupported", withRequired(field(corev1.NodeSelectorOpExists)), false},
		{"In without values invalid", withRequired(expr("zone", corev1.NodeSelectorOpIn)), false},
		{"NotIn without values invalid", withRequired(expr("rack", corev1.NodeSelectorOpNotIn)), false},
		{"Exists with values invalid", withRequired(expr("zone", corev1.NodeSelectorOpExists, "a")), false},
		{"invalid term skipped, next ORed", withRequired(expr("zone", corev1.NodeSelectorOpIn), expr("zone", corev1.NodeSelectorOpIn, "a")), true},
		{"expressions and fields ANDed", withRequired(corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
			MatchFields:      []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}}},
		}), false},
		{"selector and affinity both needed", func(p *corev1.Pod) {
			withNodeSelector("zone", "b")(p)
			withRequired(expr("disk", corev1.NodeSelectorOpExists))(p)
		}, false},
	}
}

func TestNodeAffinityFilter(t *testing.T) {
	node := makeNode("n1", "1", "1Gi", withLabels("zone", "a", "gen", "5", "disk", "ssd"))
	for _, tc := range nodeAffinityCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := runOne(filterNodeAffinity, makePod("p", "", "", tc.opt), node)
			if (got == nil) != tc.fits {
				t.Fatalf("fits = %v (%q), want %v", got == nil, got, tc.fits)
			}
			if got != nil && got[0] != ReasonNodeAffinity {
				t.Fatalf("reason %q", got[0])
			}
		})
	}
}
