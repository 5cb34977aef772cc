package scheduler

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFilterInterPodAffinity(t *testing.T) {
	nodes := zonedNodes([]string{"a", "b"}, 2, "4", "8Gi") // a-a a-b b-a b-b
	cache := makePod("cache", "", "", onNode("b-a"), podLabels("app", "cache"))
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []*corev1.Pod
		nsLabels map[string]map[string]string
		want     map[string][]string
	}{
		{"affinity to a zone with a match", makePod("p", "", "", requiredAffinity(podTerm(LabelZone, "app", "cache"))),
			[]*corev1.Pod{cache}, nil, map[string][]string{"a-a": {ReasonPodAffinity}, "a-b": {ReasonPodAffinity}}},
		{"affinity with no match anywhere", makePod("p", "", "", requiredAffinity(podTerm(LabelZone, "app", "cache"))),
			nil, nil, map[string][]string{"a-a": {ReasonPodAffinity}, "a-b": {ReasonPodAffinity}, "b-a": {ReasonPodAffinity}, "b-b": {ReasonPodAffinity}}},
		{"first pod of a self-affine group fits", makePod("p", "", "", podLabels("app", "cache"), requiredAffinity(podTerm(LabelZone, "app", "cache"))),
			nil, nil, map[string][]string{}},
		{"affinity needs the topology label", makePod("p", "", "", podLabels("app", "cache"), requiredAffinity(podTerm("rack", "app", "cache"))),
			nil, nil, map[string][]string{"a-a": {ReasonPodAffinity}, "a-b": {ReasonPodAffinity}, "b-a": {ReasonPodAffinity}, "b-b": {ReasonPodAffinity}}},
		{"anti-affinity per host", makePod("p", "", "", requiredAnti(podTerm(LabelHostname, "app", "cache"))),
			[]*corev1.Pod{cache}, nil, map[string][]string{"b-a": {ReasonPodAntiAffinity}}},
		{"anti-affinity per zone", makePod("p", "", "", requiredAnti(podTerm(LabelZone, "app", "cache"))),
			[]*corev1.Pod{cache}, nil, map[string][]string{"b-a": {ReasonPodAntiAffinity}, "b-b": {ReasonPodAntiAffinity}}},
		{"anti-affinity ignores other namespaces", makePod("p", "", "", inNamespace("other"), requiredAnti(podTerm(LabelZone, "app", "cache"))),
			[]*corev1.Pod{cache}, nil, map[string][]string{}},
		{"namespaceSelector selects by namespace labels", makePod("p", "", "", inNamespace("other"),
			requiredAnti(corev1.PodAffinityTerm{TopologyKey: LabelZone, LabelSelector: matchLabels("app", "cache"), NamespaceSelector: matchLabels("team", "x")})),
			[]*corev1.Pod{cache}, map[string]map[string]string{"default": {"team": "x"}}, map[string][]string{"b-a": {ReasonPodAntiAffinity}, "b-b": {ReasonPodAntiAffinity}}},
		{"empty namespaceSelector selects all namespaces", makePod("p", "", "", inNamespace("other"),
			requiredAnti(corev1.PodAffinityTerm{TopologyKey: LabelHostname, LabelSelector: matchLabels("app", "cache"), NamespaceSelector: &metav1.LabelSelector{}})),
			[]*corev1.Pod{cache}, nil, map[string][]string{"b-a": {ReasonPodAntiAffinity}}},
		{"namespaces list", makePod("p", "", "", inNamespace("other"),
			requiredAnti(corev1.PodAffinityTerm{TopologyKey: LabelHostname, LabelSelector: matchLabels("app", "cache"), Namespaces: []string{"default"}})),
			[]*corev1.Pod{cache}, nil, map[string][]string{"b-a": {ReasonPodAntiAffinity}}},
		{"existing pod's anti-affinity repels the pod", makePod("p", "", "", podLabels("app", "web")),
			[]*corev1.Pod{makePod("e", "", "", onNode("a-a"), requiredAnti(podTerm(LabelZone, "app", "web")))}, nil,
			map[string][]string{"a-a": {ReasonExistingAntiAffinity}, "a-b": {ReasonExistingAntiAffinity}}},
		{"existing anti-affinity not matching the pod", makePod("p", "", "", podLabels("app", "db")),
			[]*corev1.Pod{makePod("e", "", "", onNode("a-a"), requiredAnti(podTerm(LabelZone, "app", "web")))}, nil, map[string][]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := NewSnapshot(nodes, tc.existing)
			snap.NamespaceLabels = tc.nsLabels
			ps := newPodState(tc.pod)
			ps.prepare(snap)
			got := map[string][]string{}
			for _, ni := range snap.Nodes {
				if r := filterInterPodAffinity(ps, ni, nil); len(r) > 0 {
					got[ni.Node.Name] = r
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestInterPodAffinityScore(t *testing.T) {
	nodes := zonedNodes([]string{"a", "b"}, 2, "4", "8Gi")
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []*corev1.Pod
		want     []int64 // a-a a-b b-a b-b
	}{
		{"preferred affinity to the cache's zone", makePod("p", "", "", preferredAffinity(10, podTerm(LabelZone, "app", "cache"))),
			[]*corev1.Pod{makePod("c", "", "", onNode("b-a"), podLabels("app", "cache"))}, []int64{0, 0, 100, 100}},
		{"preferred anti-affinity away from web hosts", makePod("p", "", "", preferredAnti(5, podTerm(LabelHostname, "app", "web"))),
			[]*corev1.Pod{makePod("w", "", "", onNode("a-b"), podLabels("app", "web"))}, []int64{100, 0, 100, 100}},
		{"existing pod's required affinity attracts (hard weight)", makePod("p", "", "", podLabels("app", "web")),
			[]*corev1.Pod{makePod("e", "", "", onNode("a-a"), requiredAffinity(podTerm(LabelZone, "app", "web")))}, []int64{100, 100, 0, 0}},
		{"existing pod's preferred anti-affinity repels", makePod("p", "", "", podLabels("app", "web")),
			[]*corev1.Pod{makePod("e", "", "", onNode("b-b"), preferredAnti(3, podTerm(LabelHostname, "app", "web")))}, []int64{100, 100, 100, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := NewSnapshot(nodes, tc.existing)
			ps := newPodState(tc.pod)
			ps.prepare(snap)
			got := interPodAffinityScores(ps, snap, snap.Nodes)
			normalizeMinMax(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHarnessAntiAffinityOnePerNode(t *testing.T) {
	h := NewHarness(fakeNodes(3, "4", "8Gi"), nil, Config{Strategy: MostAllocated})
	db := func(i int) *corev1.Pod {
		return makePod(fmt.Sprintf("db-%d", i), "100m", "", podLabels("app", "db"), requiredAnti(podTerm(LabelHostname, "app", "db")))
	}
	for i := range 3 {
		if _, err := h.ScheduleAndBind(db(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(h.Binder.(*RecordingBinder).PerNode()); got != "map[node-00000:1 node-00001:1 node-00002:1]" {
		t.Fatalf("per node %s", got)
	}
	_, err := h.ScheduleAndBind(db(3))
	if want := "0/3 nodes are available: 3 " + ReasonPodAntiAffinity + "."; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	// A pod the db pods' anti-affinity does not name still fits.
	if _, err := h.ScheduleAndBind(makePod("web", "100m", "", podLabels("app", "web"))); err != nil {
		t.Fatal(err)
	}
}
