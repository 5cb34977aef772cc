package scheduler

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

func TestFilterPodTopologySpread(t *testing.T) {
	zones := func(extra ...*corev1.Node) []*corev1.Node {
		return append(zonedNodes([]string{"a", "b"}, 1, "4", "8Gi"), extra...)
	}
	web := func(name, node string, kv ...string) *corev1.Pod {
		return makePod(name, "", "", onNode(node), podLabels(append([]string{"app", "web"}, kv...)...))
	}
	zoneSkew1 := spreadOn(LabelZone, 1, corev1.DoNotSchedule, "app", "web")
	tests := []struct {
		name     string
		pod      *corev1.Pod
		nodes    []*corev1.Node
		existing []*corev1.Pod
		want     map[string][]string // node -> reasons (absent: fits)
	}{
		{"skew against the emptier zone", makePod("p", "", "", podLabels("app", "web"), zoneSkew1), zones(),
			[]*corev1.Pod{web("e1", "a-a"), web("e2", "a-a")}, map[string][]string{"a-a": {ReasonSpread}}},
		{"missing topology label", makePod("p", "", "", podLabels("app", "web"), zoneSkew1), zones(makeNode("bare", "4", "8Gi")),
			nil, map[string][]string{"bare": {ReasonSpreadMissingLabel}}},
		{"pod not matching its selector does not count itself", makePod("p", "", "", zoneSkew1), zones(),
			[]*corev1.Pod{web("e1", "a-a")}, nil},
		{"other namespaces do not count", makePod("p", "", "", podLabels("app", "web"), zoneSkew1), zones(),
			[]*corev1.Pod{web("e1", "b-a"), makePod("e2", "", "", onNode("a-a"), podLabels("app", "web"), inNamespace("x"))},
			map[string][]string{"b-a": {ReasonSpread}}},
		{"minDomains above the domains counts the minimum as 0", makePod("p", "", "", podLabels("app", "web"), zoneSkew1,
			func(p *corev1.Pod) { p.Spec.TopologySpreadConstraints[0].MinDomains = ptr.To[int32](3) }), zones(),
			[]*corev1.Pod{web("e1", "a-a"), web("e2", "b-a")}, map[string][]string{"a-a": {ReasonSpread}, "b-a": {ReasonSpread}}},
		{"nodeTaintsPolicy Ignore counts a tainted empty zone", makePod("p", "", "", podLabels("app", "web"), zoneSkew1),
			zones(makeNode("c-a", "4", "8Gi", withLabels(LabelZone, "c"), withTaint("x", "", corev1.TaintEffectNoSchedule))),
			[]*corev1.Pod{web("e1", "a-a"), web("e2", "b-a")}, map[string][]string{"a-a": {ReasonSpread}, "b-a": {ReasonSpread}}},
		{"nodeTaintsPolicy Honor skips the tainted zone", makePod("p", "", "", podLabels("app", "web"), zoneSkew1,
			func(p *corev1.Pod) {
				p.Spec.TopologySpreadConstraints[0].NodeTaintsPolicy = ptr.To(corev1.NodeInclusionPolicyHonor)
			}),
			zones(makeNode("c-a", "4", "8Gi", withLabels(LabelZone, "c"), withTaint("x", "", corev1.TaintEffectNoSchedule))),
			[]*corev1.Pod{web("e1", "a-a"), web("e2", "b-a")}, nil},
		{"nodeAffinityPolicy Honor skips zones the pod cannot use", makePod("p", "", "", podLabels("app", "web"), zoneSkew1,
			withNodeSelector(LabelZone, "a")), zones(), []*corev1.Pod{web("e1", "a-a")}, nil},
		{"matchLabelKeys narrows the selector", makePod("p", "", "", podLabels("app", "web", "rev", "2"), zoneSkew1,
			func(p *corev1.Pod) { p.Spec.TopologySpreadConstraints[0].MatchLabelKeys = []string{"rev"} }), zones(),
			[]*corev1.Pod{web("e1", "a-a", "rev", "1"), web("e2", "a-a", "rev", "1")}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := NewSnapshot(tc.nodes, tc.existing)
			ps := newPodState(tc.pod)
			ps.prepare(snap)
			got := map[string][]string{}
			for _, ni := range snap.Nodes {
				if r := filterPodTopologySpread(ps, ni, nil); len(r) > 0 {
					got[ni.Node.Name] = r
				}
			}
			if tc.want == nil {
				tc.want = map[string][]string{}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHarnessSpread(t *testing.T) {
	web := podLabels("app", "web")
	tests := []struct {
		name string
		cfg  Config
		opt  podOpt
		n    int
		want string
	}{
		{"DoNotSchedule hostname beats bin-packing", Config{Strategy: MostAllocated},
			spreadOn(LabelHostname, 1, corev1.DoNotSchedule, "app", "web"), 6, "map[node-00000:2 node-00001:2 node-00002:2]"},
		{"ScheduleAnyway hostname beats bin-packing", Config{Strategy: MostAllocated},
			spreadOn(LabelHostname, 1, corev1.ScheduleAnyway, "app", "web"), 3, "map[node-00000:1 node-00001:1 node-00002:1]"},
		{"system defaults spread a Service's pods", Config{Strategy: MostAllocated, DefaultSpreadSelector: func(*corev1.Pod) labels.Selector {
			return labels.SelectorFromSet(labels.Set{"app": "web"})
		}}, func(*corev1.Pod) {}, 3, "map[node-00000:1 node-00001:1 node-00002:1]"},
		{"without system defaults MostAllocated packs", Config{Strategy: MostAllocated}, func(*corev1.Pod) {}, 3, "map[node-00000:3]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHarness(fakeNodes(3, "4", "8Gi"), nil, tc.cfg)
			for i := range tc.n {
				if _, err := h.ScheduleAndBind(makePod(fmt.Sprintf("w-%d", i), "100m", "128Mi", web, tc.opt)); err != nil {
					t.Fatal(err)
				}
			}
			if got := fmt.Sprint(h.Binder.(*RecordingBinder).PerNode()); got != tc.want {
				t.Fatalf("per node %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSpreadFitErrorMessage(t *testing.T) {
	h := NewHarness(fakeNodes(2, "4", "8Gi"), nil, Config{})
	opt := spreadOn(LabelHostname, 1, corev1.DoNotSchedule, "app", "web")
	ignoreAffinity := func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints[0].NodeAffinityPolicy = ptr.To(corev1.NodeInclusionPolicyIgnore)
	}
	for i := range 2 {
		if _, err := h.ScheduleAndBind(makePod(fmt.Sprintf("w-%d", i), "100m", "", podLabels("app", "web"), opt, ignoreAffinity,
			withNodeSelector(LabelHostname, "node-00000"))); err != nil && i == 0 {
			t.Fatal(err)
		} else if i == 1 {
			want := "0/2 nodes are available: 1 " + ReasonNodeAffinity + ", 1 " + ReasonSpread + "."
			if err == nil || err.Error() != want {
				t.Fatalf("got %v\nwant %s", err, want)
			}
		}
	}
}
