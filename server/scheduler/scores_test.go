package scheduler

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestResourceScores(t *testing.T) {
	node := makeNode("n", "4", "8Gi")
	existing := []*corev1.Pod{makePod("e", "1", "2Gi", onNode("n"))}
	tests := []struct {
		name         string
		pod          *corev1.Pod
		least, most  int64
		balancedWant int64
	}{
		// cpu 2000/4000 = 50%, mem 4Gi/8Gi = 50%: balance unchanged (100 before and after) gives 75.
		{"half used", makePod("p", "1", "2Gi"), 50, 50, 75},
		// cpu 3000/4000 (75%), mem 3Gi/8Gi (37.5%): least (25+62)/2, most (75+37)/2, balance 100 -> 81 gives 50+(50-19)/2.
		{"unbalanced", makePod("p", "2", "1Gi"), 43, 56, 65},
		// no requests: scoring uses 100m and 200Mi defaults (cpu 1100/4000, mem 2248Mi/8Gi); balanced is skipped (0) for best-effort pods.
		{"best effort", makePod("p", "", ""), 72, 27, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSnapshot([]*corev1.Node{node}, existing)
			ps, ni := newPodState(tc.pod), s.Nodes[0]
			got := []int64{resourceFitScore(LeastAllocated, ps, ni), resourceFitScore(MostAllocated, ps, ni), balancedAllocationScore(ps, ni)}
			want := []int64{tc.least, tc.most, tc.balancedWant}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("least/most/balanced = %v, want %v", got, want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name    string
		in      []int64
		reverse bool
		want    []int64
	}{
		{"by max", []int64{0, 5, 10}, false, []int64{0, 50, 100}},
		{"reversed", []int64{0, 1, 2}, true, []int64{100, 50, 0}},
		{"all zero", []int64{0, 0}, false, []int64{0, 0}},
		{"all zero reversed", []int64{0, 0}, true, []int64{100, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			normalize(tc.in, tc.reverse)
			if !reflect.DeepEqual(tc.in, tc.want) {
				t.Fatalf("got %v, want %v", tc.in, tc.want)
			}
		})
	}
}

func TestScheduleScoring(t *testing.T) {
	nodes := func(opts ...nodeOpt) []*corev1.Node {
		return []*corev1.Node{makeNode("a", "4", "8Gi"), makeNode("b", "4", "8Gi", opts...)}
	}
	loadA := []*corev1.Pod{makePod("e", "2", "4Gi", onNode("a"))}
	tests := []struct {
		name  string
		nodes []*corev1.Node
		pods  []*corev1.Pod
		pod   *corev1.Pod
		cfg   Config
		want  string
	}{
		{"least allocated picks empty node", nodes(), loadA, makePod("p", "1", "1Gi"), Config{}, "b"},
		{"most allocated picks loaded node", nodes(), loadA, makePod("p", "1", "1Gi"), Config{Strategy: MostAllocated}, "a"},
		{"tie broken by snapshot order", nodes(), nil, makePod("p", "1", "1Gi"), Config{}, "a"},
		{"preferred affinity", nodes(withLabels("disk", "ssd")), nil, makePod("p", "1", "1Gi", withPreferred(10, expr("disk", corev1.NodeSelectorOpIn, "ssd"))), Config{}, "b"},
		{"preferred affinity beats load", nodes(withLabels("disk", "ssd")), []*corev1.Pod{makePod("e", "2", "4Gi", onNode("b"))}, makePod("p", "1", "1Gi", withPreferred(10, expr("disk", corev1.NodeSelectorOpExists))), Config{}, "b"},
		{"PreferNoSchedule avoided", []*corev1.Node{makeNode("a", "4", "8Gi", withTaint("x", "y", corev1.TaintEffectPreferNoSchedule)), makeNode("b", "4", "8Gi")}, nil, makePod("p", "1", "1Gi"), Config{}, "b"},
		{"PreferNoSchedule tolerated", []*corev1.Node{makeNode("a", "4", "8Gi", withTaint("x", "y", corev1.TaintEffectPreferNoSchedule)), makeNode("b", "4", "8Gi", withTaint("z", "", corev1.TaintEffectPreferNoSchedule))}, nil,
			makePod("p", "1", "1Gi", withToleration(corev1.Toleration{Key: "x", Operator: corev1.TolerationOpExists})), Config{}, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Schedule(tc.pod, NewSnapshot(tc.nodes, tc.pods), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Node != tc.want {
				t.Fatalf("scheduled on %q, want %q", res.Node, tc.want)
			}
		})
	}
}
