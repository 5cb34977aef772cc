package scheduler

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkSchedule schedules 10,000 pods onto 5,000 fake nodes in
// sequence (schedule, bind, assume) per iteration and reports pods/s.
// Every node is filtered and scored for every pod (no sampling).
func BenchmarkSchedule(b *testing.B) {
	const numNodes, numPods = 5000, 10000
	zoned := func(nodes []*corev1.Node) []*corev1.Node {
		for i, n := range nodes {
			n.Labels["zone"] = fmt.Sprintf("z%d", i%10)
		}
		return nodes
	}
	affinity := func(p *corev1.Pod) {
		withRequired(expr("zone", corev1.NodeSelectorOpIn, "z1", "z2", "z3", "z4", "z5"))(p)
		withPreferred(10, expr("zone", corev1.NodeSelectorOpIn, "z1"))(p)
	}
	// Pods of 1,000 apps (10 each): spread over zones, or kept apart per
	// host by required anti-affinity against their own app.
	spread := func(p *corev1.Pod) {
		spreadOn("zone", 1, corev1.DoNotSchedule, "app", p.Labels["app"])(p)
		spreadOn(LabelHostname, 1, corev1.ScheduleAnyway, "app", p.Labels["app"])(p)
	}
	anti := func(p *corev1.Pod) { requiredAnti(podTerm(LabelHostname, "app", p.Labels["app"]))(p) }
	cases := []struct {
		name string
		cfg  Config
		opts []podOpt
	}{
		{"plain", Config{}, nil},
		{"most-allocated", Config{Strategy: MostAllocated}, nil},
		{"node-affinity", Config{}, []podOpt{affinity}},
		{"topology-spread", Config{}, []podOpt{spread}},
		{"pod-anti-affinity", Config{}, []podOpt{anti}},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			nodes := zoned(fakeNodes(numNodes, "32", "256Gi"))
			pods := make([]*corev1.Pod, numPods)
			for i := range pods {
				app := podLabels("app", fmt.Sprintf("app-%03d", i%1000))
				pods[i] = makePod(fmt.Sprintf("p-%05d", i), "100m", "128Mi", append([]podOpt{app}, bc.opts...)...)
			}
			benchHarness(b, nodes, pods, bc.cfg)
		})
	}
}

func benchHarness(b *testing.B, nodes []*corev1.Node, pods []*corev1.Pod, cfg Config) {
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		h := NewHarness(nodes, nil, cfg)
		b.StartTimer()
		for _, p := range pods {
			if _, err := h.ScheduleAndBind(p); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(pods)*b.N)/b.Elapsed().Seconds(), "pods/s")
}
