package metricsapi

import (
	"testing"
	"time"
)

var t0 = time.Unix(10000, 0)

func batch(at time.Duration, nodeCPU uint64, containers map[string]Point) Batch {
	b := Batch{Node: &Point{Time: t0.Add(at), CPU: nodeCPU, Memory: 1 << 30}, Pods: map[PodRef]map[string]Point{}}
	if containers != nil {
		b.Pods[PodRef{"default", "web"}] = containers
	}
	return b
}

func cpuOf(t *testing.T, u PodUsage, name string) string {
	t.Helper()
	for _, c := range u.Containers {
		if c.Name == name {
			q := c.Resources["cpu"]
			return q.String()
		}
	}
	t.Fatalf("no container %s in %+v", name, u)
	return ""
}

func TestStoreNeedsTwoReadings(t *testing.T) {
	s := NewStore(15 * time.Second)
	start := t0.Add(-time.Hour)
	s.Put("n1", batch(0, 10e9, map[string]Point{"app": {Start: start, Time: t0, CPU: 1e9, Memory: 100}}))
	if _, ok := s.Node("n1"); ok {
		t.Error("node usage after one reading")
	}
	if _, ok := s.Pod(PodRef{"default", "web"}); ok {
		t.Error("pod usage after one reading")
	}
	s.Put("n1", batch(15*time.Second, 25e9, map[string]Point{"app": {Start: start, Time: t0.Add(15 * time.Second), CPU: 4e9, Memory: 200}}))
	n, ok := s.Node("n1")
	if q := n.Resources["cpu"]; !ok || q.String() != "1" || n.Window != 15*time.Second {
		t.Errorf("node usage = %+v, %v", n, ok)
	}
	p, ok := s.Pod(PodRef{"default", "web"})
	if !ok || cpuOf(t, p, "app") != "200m" || p.Window != 15*time.Second || !p.Time.Equal(t0.Add(15*time.Second)) {
		t.Errorf("pod usage = %+v, %v", p, ok)
	}
	// A reading no newer than the last keeps the previous pair.
	s.Put("n1", batch(15*time.Second, 25e9, map[string]Point{"app": {Start: start, Time: t0.Add(15 * time.Second), CPU: 4e9, Memory: 200}}))
	if _, ok := s.Node("n1"); !ok {
		t.Error("a repeated reading dropped the node's usage")
	}
	if _, ok := s.Pod(PodRef{"default", "web"}); !ok {
		t.Error("a repeated reading dropped the pod's usage")
	}
}

func TestStoreRestartedContainerStartsOver(t *testing.T) {
	s := NewStore(15 * time.Second)
	s.Put("n1", batch(0, 1, map[string]Point{"app": {Start: t0.Add(-time.Hour), Time: t0, CPU: 9e9, Memory: 1}}))
	// Restarted after the last reading: counters restart, no usage yet.
	s.Put("n1", batch(15*time.Second, 2, map[string]Point{"app": {Start: t0.Add(14 * time.Second), Time: t0.Add(15 * time.Second), CPU: 1e6, Memory: 1}}))
	if _, ok := s.Pod(PodRef{"default", "web"}); ok {
		t.Error("usage across a container restart")
	}
}

func TestStoreFreshContainerCountsFromStart(t *testing.T) {
	s := NewStore(15 * time.Second)
	// Started 12 s before its first reading (≥ 10 s, < one resolution):
	// usage from its start with zero CPU then.
	s.Put("n1", batch(0, 1, map[string]Point{"app": {Start: t0.Add(-12 * time.Second), Time: t0, CPU: 6e9, Memory: 1}}))
	p, ok := s.Pod(PodRef{"default", "web"})
	if !ok || cpuOf(t, p, "app") != "500m" || p.Window != 12*time.Second {
		t.Errorf("fresh container usage = %+v, %v", p, ok)
	}
	// Younger than 10 s: too imprecise, nothing yet.
	s.Put("n2", Batch{Pods: map[PodRef]map[string]Point{{"default", "young"}: {"c": {Start: t0.Add(-5 * time.Second), Time: t0, CPU: 1, Memory: 1}}}})
	if _, ok := s.Pod(PodRef{"default", "young"}); ok {
		t.Error("usage of a container younger than 10 s")
	}
}

func TestStorePodNeedsEveryContainer(t *testing.T) {
	s := NewStore(15 * time.Second)
	start := t0.Add(-time.Hour)
	s.Put("n1", batch(0, 1, map[string]Point{"a": {Start: start, Time: t0, CPU: 1, Memory: 1}}))
	s.Put("n1", batch(15*time.Second, 2, map[string]Point{"a": {Start: start, Time: t0.Add(15 * time.Second), CPU: 2, Memory: 1},
		"b": {Start: start, Time: t0.Add(15 * time.Second), CPU: 2, Memory: 1}}))
	if _, ok := s.Pod(PodRef{"default", "web"}); ok {
		t.Error("pod usage while container b has one reading")
	}
}

func TestStoreForgets(t *testing.T) {
	s := NewStore(15 * time.Second)
	start := t0.Add(-time.Hour)
	for _, n := range []string{"n1", "n2", "n3"} {
		s.Put(n, batch(0, 1, map[string]Point{"a": {Start: start, Time: t0, CPU: 1, Memory: 1}}))
	}
	// The pod moved off n1: its next scrape lacks it.
	s.Put("n1", batch(15*time.Second, 2, nil))
	s.Drop("n2")
	s.Retain(map[string]bool{"n1": true, "n2": true})
	if nodes, containers := s.Size(); nodes != 1 || containers != 0 {
		t.Errorf("size = %d nodes, %d containers, want 1, 0", nodes, containers)
	}
	if _, ok := s.Node("n1"); !ok {
		t.Error("n1 lost its usage")
	}
}
