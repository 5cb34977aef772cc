package daemonset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestShouldRun(t *testing.T) {
	node := func(lbls map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: lbls}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	affinity := func(op corev1.NodeSelectorOperator, vals ...string) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: op, Values: vals}}}}}}}
	}
	noSched := corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}
	noExec := corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}
	tests := []struct {
		name      string
		node      *corev1.Node
		spec      corev1.PodSpec
		run, keep bool
	}{
		{"plain node", node(nil), corev1.PodSpec{}, true, true},
		{"nodeSelector match", node(map[string]string{"a": "b"}), corev1.PodSpec{NodeSelector: map[string]string{"a": "b"}}, true, true},
		{"nodeSelector miss", node(nil), corev1.PodSpec{NodeSelector: map[string]string{"a": "b"}}, false, false},
		{"nodeName other", node(nil), corev1.PodSpec{NodeName: "n2"}, false, false},
		{"affinity In", node(map[string]string{"zone": "x"}), corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorOpIn, "x")}, true, true},
		{"affinity NotIn", node(map[string]string{"zone": "x"}), corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorOpNotIn, "x")}, false, false},
		{"NoSchedule taint keeps", node(nil, noSched), corev1.PodSpec{}, false, true},
		{"NoExecute taint evicts", node(nil, noExec), corev1.PodSpec{}, false, false},
		{"tolerated", node(nil, noExec), corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}, true, true},
		{"wrong value", node(nil, noSched), corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Value: "web"}}}, false, true},
		{"not-ready tolerated by default", node(nil, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}), corev1.PodSpec{}, true, true},
		{"cordoned tolerated by default", node(nil, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}), corev1.PodSpec{}, true, true},
		{"network-unavailable without hostNetwork", node(nil, corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), corev1.PodSpec{}, false, true},
		{"network-unavailable with hostNetwork", node(nil, corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), corev1.PodSpec{HostNetwork: true}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec.DeepCopy()
			addTolerations(spec)
			run, keep := shouldRun(tt.node, spec)
			if run != tt.run || keep != tt.keep {
				t.Fatalf("shouldRun = %v,%v, want %v,%v", run, keep, tt.run, tt.keep)
			}
		})
	}
}

func TestBudgets(t *testing.T) {
	// covered through rollingUpdate in the integration test; here the rounding.
	for _, tt := range []struct {
		surge, unavail string
		desired        int
		wantS, wantU   int
	}{
		{"0", "1", 5, 0, 1}, {"0", "0", 5, 0, 1}, {"25%", "0", 5, 2, 0}, {"0", "30%", 5, 0, 2},
	} {
		ds := testDS("x")
		ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = intOrStr(tt.surge)
		ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = intOrStr(tt.unavail)
		s, u := budgets(ds, tt.desired)
		if s != tt.wantS || u != tt.wantU {
			t.Errorf("budgets(%s,%s,%d) = %d,%d want %d,%d", tt.surge, tt.unavail, tt.desired, s, u, tt.wantS, tt.wantU)
		}
	}
}

func TestPinToNodeReplacesRequiredTerms(t *testing.T) {
	ds := testDS("x")
	ds.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}}}}}}}
	pod := newPod(ds, "n7", "abc")
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 0 || terms[0].MatchFields[0].Values[0] != "n7" {
		t.Fatalf("terms = %+v", terms)
	}
	if targetNode(pod) != "n7" || pod.Labels["controller-revision-hash"] != "abc" || pod.GenerateName != "x-" {
		t.Fatalf("pod = %+v", pod.ObjectMeta)
	}
	if len(pod.Spec.Tolerations) != 6 {
		t.Fatalf("tolerations = %+v", pod.Spec.Tolerations)
	}
	if ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields != nil {
		t.Fatal("template mutated")
	}
}
