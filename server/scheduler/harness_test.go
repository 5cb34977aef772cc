package scheduler

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func scheduleAll(t *testing.T, h *Harness, n int, cpu, mem string) {
	t.Helper()
	for i := range n {
		if _, err := h.ScheduleAndBind(makePod(fmt.Sprintf("p-%d", i), cpu, mem)); err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
	}
}

func TestHarnessSpreadAndPack(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want map[string]int
	}{
		{"least allocated spreads", Config{}, map[string]int{"node-00000": 3, "node-00001": 3, "node-00002": 3}},
		{"least allocated spreads with random ties", Config{Rand: rand.New(rand.NewPCG(1, 2))}, map[string]int{"node-00000": 3, "node-00001": 3, "node-00002": 3}},
		{"most allocated packs", Config{Strategy: MostAllocated}, map[string]int{"node-00000": 4, "node-00001": 4, "node-00002": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHarness(fakeNodes(3, "4", "8Gi"), nil, tc.cfg)
			scheduleAll(t, h, 9, "1", "1Gi")
			got := h.Binder.(*RecordingBinder).PerNode()
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("per node %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHarnessFillsThenFails(t *testing.T) {
	nodes := []*corev1.Node{
		makeNode("a", "2", "4Gi"),
		makeNode("b", "8", "16Gi", withLabels("zone", "b")),
		makeNode("c", "8", "16Gi", withLabels("zone", "c")),
	}
	h := NewHarness(nodes, nil, Config{})
	for i := range 2 {
		pod := makePod(fmt.Sprintf("a-%d", i), "1", "1Gi", withNodeSelector("kubernetes.io/hostname", "a"))
		if res, err := h.ScheduleAndBind(pod); err != nil || res.Node != "a" {
			t.Fatalf("pod %d: %v on %q", i, err, res.Node)
		}
	}
	_, err := h.ScheduleAndBind(makePod("late", "1", "1Gi", withRequired(expr("zone", corev1.NodeSelectorOpNotIn, "b", "c"))))
	want := "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."
	if !errors.Is(err, ErrUnschedulable) || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	if n := len(h.Binder.(*RecordingBinder).Bindings()); n != 2 {
		t.Fatalf("%d bindings, want 2", n)
	}
}

func TestHarnessHostPortsOnePerNode(t *testing.T) {
	h := NewHarness(fakeNodes(3, "4", "8Gi"), nil, Config{Strategy: MostAllocated})
	for i := range 3 {
		if _, err := h.ScheduleAndBind(makePod(fmt.Sprintf("hp-%d", i), "100m", "", withHostPort(8080, "", ""))); err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
	}
	_, err := h.ScheduleAndBind(makePod("hp-3", "100m", "", withHostPort(8080, "", "")))
	if err == nil || err.Error() != "0/3 nodes are available: 3 "+ReasonNodePorts+"." {
		t.Fatalf("got %v", err)
	}
}

func TestRecordingBinderRejectsDoubleBind(t *testing.T) {
	b := &RecordingBinder{}
	if err := b.Bind("ns/p", "a"); err != nil {
		t.Fatal(err)
	}
	if err := b.Bind("ns/p", "b"); !errors.Is(err, ErrAlreadyBound) {
		t.Fatalf("second bind: %v", err)
	}
}

func TestHarnessRandomTiesAreSeeded(t *testing.T) {
	run := func(seed uint64) []Binding {
		h := NewHarness(fakeNodes(20, "4", "8Gi"), nil, Config{Rand: rand.New(rand.NewPCG(seed, 0))})
		scheduleAll(t, h, 10, "100m", "128Mi")
		return h.Binder.(*RecordingBinder).Bindings()
	}
	a, b := run(7), run(7)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("same seed, different placements:\n%v\n%v", a, b)
	}
}

func TestScheduleHonoursNodeName(t *testing.T) {
	h := NewHarness(fakeNodes(3, "4", "8Gi"), nil, Config{})
	res, err := h.ScheduleAndBind(makePod("pinned", "1", "1Gi", onNode("node-00002")))
	if err != nil || res.Node != "node-00002" || res.Feasible != 1 {
		t.Fatalf("got %+v, %v", res, err)
	}
	_, err = Schedule(makePod("lost", "1", "1Gi", onNode("gone")), h.Snapshot, Config{})
	if err == nil || err.Error() != "0/3 nodes are available: 3 "+ReasonNodeName+"." {
		t.Fatalf("got %v", err)
	}
}
