package podautoscaler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// The scenarios below are upstream's replica_calculator_test.go cases
// (TestReplicaCalcResourceScale, TestReplicaCalcResourceMissingMetrics),
// with its fixture: two containers per pod, each with the pod's request,
// metrics with a one-minute window; "hot" pods started now, "cool" ones
// three minutes ago; upstream's testing periods (cpu initialization 2 min,
// readiness delay 10 s).

const containersPerPod = 2

type scenario struct {
	current   int32
	container string
	requests  []string
	levels    [][]int64
	podNames  []string
	readiness []corev1.ConditionStatus
	startTime []time.Time
	phase     []corev1.PodPhase
	deleted   []bool
}

func levels(v ...int64) [][]int64 {
	out := make([][]int64, len(v))
	for i := range v {
		out[i] = []int64{v[i], v[i]}
	}
	return out
}

func reqs(n int, v string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func (f scenario) pods(now time.Time) []*corev1.Pod {
	n := int(f.current)
	if len(f.phase) > n {
		n = len(f.phase)
	}
	var out []*corev1.Pod
	for i := range n {
		ready, phase, start := corev1.ConditionTrue, corev1.PodRunning, time.Time{}
		if i < len(f.readiness) {
			ready = f.readiness[i]
		}
		if i < len(f.phase) {
			phase = f.phase[i]
		}
		if i < len(f.startTime) {
			start = f.startTime[i]
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("test-pod-%d", i)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "container1"}, {Name: "container2"}}},
			Status: corev1.PodStatus{Phase: phase, StartTime: &metav1.Time{Time: start},
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
		if i < len(f.deleted) && f.deleted[i] {
			p.DeletionTimestamp = &metav1.Time{Time: now}
		}
		if i < len(f.requests) {
			r := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(f.requests[i])}}
			p.Spec.Containers[0].Resources, p.Spec.Containers[1].Resources = r, r
		}
		out = append(out, p)
	}
	return out
}

// podMetricsList is what the fake metrics API of upstream's test returns.
func (f scenario) podMetricsList() []metricsv1beta1.PodMetrics {
	var out []metricsv1beta1.PodMetrics
	for i, lv := range f.levels {
		name := fmt.Sprintf("test-pod-%d", i)
		if i < len(f.podNames) {
			name = f.podNames[i]
		}
		m := metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}, Window: metav1.Duration{Duration: time.Minute},
			Containers: make([]metricsv1beta1.ContainerMetrics, containersPerPod)}
		for j, v := range lv {
			m.Containers[j] = metricsv1beta1.ContainerMetrics{Name: fmt.Sprintf("container%d", j+1),
				Usage: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(v, resource.DecimalSI)}}
		}
		out = append(out, m)
	}
	return out
}

func (f scenario) input(now time.Time) calcInput {
	return calcInput{currentReplicas: f.current, resource: corev1.ResourceCPU, container: f.container, pods: f.pods(now),
		metrics: podUsage(f.podMetricsList(), corev1.ResourceCPU, f.container), tol: tolerances{0.1, 0.1}, now: now,
		cpuInitPeriod: 2 * time.Minute, readinessDelay: 10 * time.Second}
}

func TestResourceUtilizationReplicas(t *testing.T) {
	now := time.Now()
	hot, cool := now, now.Add(-3*time.Minute)
	F, T := corev1.ConditionFalse, corev1.ConditionTrue
	running, pending, failed := corev1.PodRunning, corev1.PodPending, corev1.PodFailed
	cases := []struct {
		name      string
		f         scenario
		target    int32
		replicas  int32
		util      int32
		raw       int64
		wantError string
	}{
		{"scale up", scenario{current: 3, requests: reqs(3, "1.0"), levels: levels(300, 500, 700)}, 30, 5, 50, 2 * 500, ""},
		{"scale up: container metric", scenario{current: 3, container: "container2", requests: reqs(3, "1.0"),
			levels: [][]int64{{1000, 300}, {1000, 500}, {1000, 700}}}, 30, 5, 50, 500, ""},
		{"scale up: unready pod scales less", scenario{current: 3, readiness: []corev1.ConditionStatus{F, T, T},
			requests: reqs(3, "1.0"), levels: levels(300, 500, 700)}, 30, 4, 60, 2 * 600, ""},
		{"scale up: hot-CPU pod scales less", scenario{current: 3, startTime: []time.Time{hot, cool, cool},
			requests: reqs(3, "1.0"), levels: levels(300, 500, 700)}, 30, 4, 60, 2 * 600, ""},
		{"no scale: unready pods ignored", scenario{current: 3, readiness: []corev1.ConditionStatus{T, F, F},
			requests: reqs(3, "1.0"), levels: levels(400, 500, 700)}, 30, 3, 40, 2 * 400, ""},
		{"scale up: failed pods ignored", scenario{current: 2, readiness: []corev1.ConditionStatus{T, T, F, F},
			phase: []corev1.PodPhase{running, running, failed, failed}, requests: reqs(4, "1.0"), levels: levels(500, 700)}, 30, 4, 60, 2 * 600, ""},
		{"scale up: pods being deleted are ignored", scenario{current: 2, readiness: []corev1.ConditionStatus{T, T, F, F},
			phase: []corev1.PodPhase{running, running, running, running}, deleted: []bool{false, false, true, true},
			requests: reqs(4, "1.0"), levels: levels(500, 700)}, 30, 4, 60, 2 * 600, ""},
		{"scale down", scenario{current: 5, requests: reqs(5, "1.0"), levels: levels(100, 300, 500, 250, 250)}, 50, 3, 28, 2 * 280, ""},
		{"scale down: exclude unready pods", scenario{current: 5, readiness: []corev1.ConditionStatus{T, T, T, F, F},
			requests: reqs(5, "1.0"), levels: levels(100, 300, 500, 250, 250)}, 50, 2, 30, 2 * 300, ""},
		{"scale down: exclude unscheduled pods", scenario{current: 5, readiness: []corev1.ConditionStatus{T, F, F, F, F},
			phase: []corev1.PodPhase{running, pending, pending, pending, pending}, requests: reqs(5, "1.0"), levels: levels(100)}, 50, 1, 10, 2 * 100, ""},
		{"scale down: ignore hot-CPU pods", scenario{current: 5, startTime: []time.Time{cool, cool, cool, hot, hot},
			requests: reqs(5, "1.0"), levels: levels(100, 300, 500, 250, 250)}, 50, 2, 30, 2 * 300, ""},
		{"superfluous metrics counted", scenario{current: 4, requests: reqs(4, "1.0"),
			levels: levels(4000, 9500, 3000, 7000, 3200, 2000)}, 100, 24, 587, 2 * 5875, ""},
		{"some pods missing metrics scales down", scenario{current: 4, requests: reqs(4, "1.0"), levels: levels(400, 95)}, 100, 3, 24, 495, ""},
		{"no change: metric equal to target", scenario{current: 2, requests: reqs(2, "1.0"), levels: levels(1000)}, 100, 2, 100, 2 * 1000, ""},
		{"no change: metric above target", scenario{current: 2, requests: reqs(2, "1.0"), levels: levels(1900)}, 100, 2, 190, 2 * 1900, ""},
		{"no change: metric below target", scenario{current: 2, requests: reqs(2, "1.0"), levels: levels(600)}, 100, 2, 60, 2 * 600, ""},
		{"no change: unready pod metric missing", scenario{current: 3, readiness: []corev1.ConditionStatus{F, T, T},
			requests: reqs(3, "1.0"), levels: levels(100, 450)}, 50, 3, 45, 2 * 450, ""},
		{"scale up: unready pod metric missing", scenario{current: 3, readiness: []corev1.ConditionStatus{F, T, T},
			requests: reqs(3, "1.0"), levels: levels(100, 2000)}, 50, 4, 200, 2 * 2000, ""},
		{"scale down: unready pod metric missing", scenario{current: 4, readiness: []corev1.ConditionStatus{F, T, T, T},
			requests: reqs(4, "1.0"), levels: levels(100, 100, 100)}, 50, 3, 10, 2 * 100, ""},
		{"scale down: target over 100", scenario{current: 4, readiness: []corev1.ConditionStatus{F, T, T, T},
			requests: []string{"1.0", "1.0", "2.0", "2.0"}, levels: levels(200, 100, 100)}, 300, 2, 6, 2 * 100, ""},
		{"rolling update with maxSurge: extra pod missing metric", scenario{current: 2,
			phase: []corev1.PodPhase{running, running, running}, requests: reqs(3, "1.0"), levels: levels(100, 100)}, 50, 2, 10, 2 * 100, ""},
		{"disjoint pod and metric names", scenario{current: 1, requests: reqs(1, "1.0"), levels: levels(100),
			podNames: []string{"an-older-pod-name"}}, 100, 0, 0, 0, "no metrics returned matched known pods"},
		{"missing CPU request on container", scenario{current: 1, levels: levels(200)}, 100, 0, 0, 0, "missing request for"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			replicas, util, raw, err := resourceUtilizationReplicas(tc.f.input(now), tc.target)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil || replicas != tc.replicas || util != tc.util || raw != tc.raw {
				t.Fatalf("got replicas %d utilization %d raw %d err %v; want %d %d %d", replicas, util, raw, err, tc.replicas, tc.util, tc.raw)
			}
		})
	}
}

// TestResourceValueReplicas: an AverageValue target (upstream's
// GetRawResourceReplicas through calcPlainMetricReplicas).
func TestResourceValueReplicas(t *testing.T) {
	now := time.Now()
	F, T := corev1.ConditionFalse, corev1.ConditionTrue
	cases := []struct {
		name     string
		f        scenario
		target   int64
		replicas int32
		usage    int64
	}{
		{"scale up", scenario{current: 3, requests: reqs(3, "1.0"), levels: levels(300, 500, 700)}, 600, 5, 1000},
		{"within tolerance", scenario{current: 3, requests: reqs(3, "1.0"), levels: levels(300, 500, 700)}, 950, 3, 1000},
		{"scale down", scenario{current: 4, requests: reqs(4, "1.0"), levels: levels(100, 100, 100, 100)}, 1000, 1, 200},
		{"scale up, unready pod counts as 0", scenario{current: 3, readiness: []corev1.ConditionStatus{F, T, T},
			requests: reqs(3, "1.0"), levels: levels(100, 1000, 1000)}, 1000, 4, 2000},
		{"scale down, missing pod counts as the target", scenario{current: 4, requests: reqs(4, "1.0"), levels: levels(100, 100)}, 1000, 3, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			replicas, usage, err := resourceValueReplicas(tc.f.input(now), tc.target)
			if err != nil || replicas != tc.replicas || usage != tc.usage {
				t.Fatalf("got %d %d %v; want %d %d", replicas, usage, err, tc.replicas, tc.usage)
			}
		})
	}
}

func TestCalculateRequestsPodLevelAndSidecars(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	cpu := func(v string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Resources: cpu("1")}, {Name: "sidecar", RestartPolicy: &always, Resources: cpu("200m")}},
		Containers:     []corev1.Container{{Name: "a", Resources: cpu("100m")}, {Name: "b", Resources: cpu("300m")}}}}
	if r, err := calculateRequests([]*corev1.Pod{pod}, "", corev1.ResourceCPU); err != nil || r["p"] != 600 {
		t.Fatalf("sum with sidecar: %v %v", r, err)
	}
	if r, err := calculateRequests([]*corev1.Pod{pod}, "b", corev1.ResourceCPU); err != nil || r["p"] != 300 {
		t.Fatalf("container b: %v %v", r, err)
	}
	if _, err := calculateRequests([]*corev1.Pod{pod}, "nope", corev1.ResourceCPU); err == nil {
		t.Fatal("unknown container: no error")
	}
	withPodLevel := pod.DeepCopy()
	withPodLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	if r, err := calculateRequests([]*corev1.Pod{withPodLevel}, "", corev1.ResourceCPU); err != nil || r["p"] != 2000 {
		t.Fatalf("pod-level: %v %v", r, err)
	}
}
