package scheduler

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func runOne(f filterFunc, pod *corev1.Pod, node *corev1.Node, existing ...*corev1.Pod) []string {
	s := NewSnapshot([]*corev1.Node{node}, existing)
	return f(newPodState(pod), s.Nodes[0], nil)
}

func TestFilters(t *testing.T) {
	tolUnsched := withToleration(corev1.Toleration{Key: TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	tolAll := withToleration(corev1.Toleration{Operator: corev1.TolerationOpExists})
	tolEq := withToleration(corev1.Toleration{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
	tests := []struct {
		name     string
		filter   filterFunc
		pod      *corev1.Pod
		node     *corev1.Node
		existing []*corev1.Pod
		want     []string
	}{
		{"schedulable node", filterNodeUnschedulable, makePod("p", "", ""), makeNode("n", "1", "1Gi"), nil, nil},
		{"cordoned node", filterNodeUnschedulable, makePod("p", "", ""), makeNode("n", "1", "1Gi", cordoned()), nil, []string{ReasonUnschedulable}},
		{"cordon tolerated", filterNodeUnschedulable, makePod("p", "", "", tolUnsched), makeNode("n", "1", "1Gi", cordoned()), nil, nil},
		{"node name matches", filterNodeName, makePod("p", "", "", onNode("n")), makeNode("n", "1", "1Gi"), nil, nil},
		{"node name differs", filterNodeName, makePod("p", "", "", onNode("m")), makeNode("n", "1", "1Gi"), nil, []string{ReasonNodeName}},
		{"fits", filterNodeResourcesFit, makePod("p", "1", "1Gi"), makeNode("n", "2", "2Gi"), []*corev1.Pod{makePod("e", "1", "1Gi", onNode("n"))}, nil},
		{"insufficient cpu", filterNodeResourcesFit, makePod("p", "1100m", "1Gi"), makeNode("n", "2", "2Gi"), []*corev1.Pod{makePod("e", "1", "", onNode("n"))}, []string{ReasonInsufficientCPU}},
		{"insufficient cpu and memory", filterNodeResourcesFit, makePod("p", "3", "3Gi"), makeNode("n", "2", "2Gi"), nil, []string{ReasonInsufficientCPU, ReasonInsufficientMem}},
		{"too many pods", filterNodeResourcesFit, makePod("p", "", ""), makeNode("n", "2", "2Gi", withMaxPods(1)), []*corev1.Pod{makePod("e", "", "", onNode("n"))}, []string{ReasonTooManyPods}},
		{"zero request always fits", filterNodeResourcesFit, makePod("p", "", ""), makeNode("n", "0", "0"), nil, nil},
		{"no taints", filterTaintToleration, makePod("p", "", ""), makeNode("n", "1", "1Gi"), nil, nil},
		{"untolerated NoSchedule", filterTaintToleration, makePod("p", "", ""), makeNode("n", "1", "1Gi", withTaint("dedicated", "gpu", corev1.TaintEffectNoSchedule)), nil, []string{ReasonUntoleratedTaint}},
		{"untolerated NoExecute", filterTaintToleration, makePod("p", "", ""), makeNode("n", "1", "1Gi", withTaint("node.kubernetes.io/unreachable", "", corev1.TaintEffectNoExecute)), nil, []string{ReasonUntoleratedTaint}},
		{"PreferNoSchedule ignored", filterTaintToleration, makePod("p", "", ""), makeNode("n", "1", "1Gi", withTaint("a", "b", corev1.TaintEffectPreferNoSchedule)), nil, nil},
		{"tolerated by Equal", filterTaintToleration, makePod("p", "", "", tolEq), makeNode("n", "1", "1Gi", withTaint("dedicated", "gpu", corev1.TaintEffectNoSchedule)), nil, nil},
		{"Equal with other value", filterTaintToleration, makePod("p", "", "", tolEq), makeNode("n", "1", "1Gi", withTaint("dedicated", "db", corev1.TaintEffectNoSchedule)), nil, []string{ReasonUntoleratedTaint}},
		{"Exists without key tolerates all", filterTaintToleration, makePod("p", "", "", tolAll), makeNode("n", "1", "1Gi", withTaint("x", "y", corev1.TaintEffectNoExecute)), nil, nil},
		{"free ports", filterNodePorts, makePod("p", "", "", withHostPort(80, "", "")), makeNode("n", "1", "1Gi"), []*corev1.Pod{makePod("e", "", "", onNode("n"), withHostPort(81, "", ""))}, nil},
		{"port taken", filterNodePorts, makePod("p", "", "", withHostPort(80, "", "")), makeNode("n", "1", "1Gi"), []*corev1.Pod{makePod("e", "", "", onNode("n"), withHostPort(80, "", corev1.ProtocolTCP))}, []string{ReasonNodePorts}},
		{"other protocol", filterNodePorts, makePod("p", "", "", withHostPort(53, "", corev1.ProtocolUDP)), makeNode("n", "1", "1Gi"), []*corev1.Pod{makePod("e", "", "", onNode("n"), withHostPort(53, "", ""))}, nil},
		{"other IPs", filterNodePorts, makePod("p", "", "", withHostPort(80, "10.0.0.1", "")), makeNode("n", "1", "1Gi"), []*corev1.Pod{makePod("e", "", "", onNode("n"), withHostPort(80, "10.0.0.2", ""))}, nil},
		{"wildcard vs IP", filterNodePorts, makePod("p", "", "", withHostPort(80, "10.0.0.1", "")), makeNode("n", "1", "1Gi"), []*corev1.Pod{makePod("e", "", "", onNode("n"), withHostPort(80, "", ""))}, []string{ReasonNodePorts}},
		{"IP vs wildcard", filterNodePorts, makePod("p", "", "", withHostPort(80, "", "")), makeNode("n", "1", "1Gi"), []*corev1.Pod{makePod("e", "", "", onNode("n"), withHostPort(80, "10.0.0.2", ""))}, []string{ReasonNodePorts}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runOne(tc.filter, tc.pod, tc.node, tc.existing...)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
