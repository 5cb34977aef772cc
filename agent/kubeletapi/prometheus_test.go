package kubeletapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/agent/runtime"
	"github.com/orch/orch/internal/metrics"
	"github.com/orch/orch/internal/metrics/metricstest"
)

type fakeCgroups struct{}

func (fakeCgroups) Cgroups(context.Context) ([]CgroupStats, error) {
	return []CgroupStats{
		{ID: "/orch/kubepods/besteffort/podu", Pod: "p", Namespace: "ns", Usage: Usage{CPUNanos: 3e9, MemoryUsage: 8192, MemoryWorkingSet: 4096}},
		{ID: "/orch/kubepods/besteffort/podu/cid", Name: "cid", Container: "c", Pod: "p", Namespace: "ns", Image: "busybox:1",
			Start: time.Unix(100, 0), Usage: Usage{CPUNanos: 1500000000, MemoryUsage: 4096, MemoryWorkingSet: 2048},
			MemoryRSS: 1024, MemoryLimit: 64 << 20, CPUQuota: 50000, CPUPeriod: 100000, CPUShares: 512},
	}, nil
}

func runningPod(start, started time.Time) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}, Status: corev1.PodStatus{
		Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: start},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "c",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: started}}}}}}}
}

func TestPrometheusEndpoints(t *testing.T) {
	b := nodePKI(t)
	pod := runningPod(time.Unix(1000, 0), time.Unix(1003, 0))
	kubelet := metrics.NewRegistry()
	kubelet.MustRegister(NewKubeletCollector("n1", func() []*corev1.Pod { return []*corev1.Pod{pod} }))
	cadvisor := prometheus.NewRegistry()
	cadvisor.MustRegister(NewCadvisorCollector(fakeCgroups{}))
	probes := prometheus.NewRegistry()
	pt := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "prober_probe_total"}, []string{"probe_type"})
	pt.WithLabelValues("Readiness").Inc()
	probes.MustRegister(pt)
	srv, err := New(zaptest.NewLogger(t), Config{Runtime: runtime.NewFake(), ServerTLS: b.ServerTLSConfig(), ClientCA: b.CAPool(),
		PodLookup: func(string, string) (Pod, bool) { return Pod{}, false }, Tokens: fakeReviews{}, Access: fakeReviews{},
		Pods: func() []*corev1.Pod { return []*corev1.Pod{pod} }, Metrics: kubelet, CadvisorMetrics: cadvisor, ProbeMetrics: probes})
	if err != nil {
		t.Fatal(err)
	}
	get := serveBearer(t, srv, b.CAPool())
	for _, p := range []string{"/metrics", "/metrics/cadvisor", "/metrics/probes"} {
		if code, _ := get(p, "nobody"); code != http.StatusForbidden {
			t.Errorf("%s without nodes/metrics: %d", p, code)
		}
	}
	parse := func(path string) metricstest.Families {
		code, body := get(path, "metrics")
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		f, err := metricstest.Parse(strings.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, body)
		}
		return f
	}
	k := parse("/metrics")
	checkSample(t, k, "kubelet_running_pods", nil, 1)
	checkSample(t, k, "kubelet_running_containers", map[string]string{"container_state": "running"}, 1)
	checkSample(t, k, "kubelet_node_name", map[string]string{"node": "n1"}, 1)
	checkSample(t, k, "kubelet_pod_start_duration_seconds", nil, 1) // sample count
	if s := k["kubelet_pod_start_duration_seconds"].GetMetric()[0].GetHistogram().GetSampleSum(); s != 3 {
		t.Errorf("pod start duration sum %v, want 3", s)
	}
	checkSample(t, parse("/metrics"), "kubelet_pod_start_duration_seconds", nil, 1) // once per pod
	if k["process_resident_memory_bytes"] == nil || k["go_goroutines"] == nil {
		t.Errorf("Go/process collectors missing: %s", k.Names())
	}
	c := parse("/metrics/cadvisor")
	ctr := map[string]string{"container": "c", "pod": "p", "namespace": "ns", "image": "busybox:1", "name": "cid",
		"id": "/orch/kubepods/besteffort/podu/cid"}
	for name, want := range map[string]float64{"container_cpu_usage_seconds_total": 1.5, "container_memory_working_set_bytes": 2048,
		"container_memory_usage_bytes": 4096, "container_memory_rss": 1024, "container_spec_memory_limit_bytes": 64 << 20,
		"container_spec_cpu_quota": 50000, "container_spec_cpu_period": 100000, "container_spec_cpu_shares": 512,
		"container_start_time_seconds": 100} {
		checkSample(t, c, name, ctr, want)
	}
	checkSample(t, c, "container_cpu_usage_seconds_total", map[string]string{"container": "", "pod": "p", "id": "/orch/kubepods/besteffort/podu"}, 3)
	if _, ok := c.Find("container_spec_cpu_quota", map[string]string{"container": ""}); ok {
		t.Error("an unlimited pod cgroup has container_spec_cpu_quota")
	}
	if s, ok := c.Find("container_last_seen", ctr); !ok || s.Value < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("container_last_seen %v %v", s, ok)
	}
	checkSample(t, c, "container_scrape_error", nil, 0)
	checkSample(t, parse("/metrics/probes"), "prober_probe_total", map[string]string{"probe_type": "Readiness"}, 1)
}

func checkSample(t *testing.T, f metricstest.Families, name string, labels map[string]string, want float64) {
	t.Helper()
	s, ok := f.Find(name, labels)
	if !ok {
		t.Errorf("%s%v missing; have %s", name, labels, f.Names())
		return
	}
	if s.Value != want {
		t.Errorf("%s%v = %v, want %v", name, labels, s.Value, want)
	}
}
