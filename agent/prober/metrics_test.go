package prober

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"
	v1 "k8s.io/api/core/v1"

	"github.com/orch/orch/internal/metrics/metricstest"
)

func TestProbeMetrics(t *testing.T) {
	h := newHarness(t)
	pm := NewMetrics()
	h.m.Stop()
	h.m = New(zaptest.NewLogger(t), Deps{Exec: h.exec.exec, Recorder: h.rec, Clock: h.fc, Metrics: pm})
	t.Cleanup(h.m.Stop)
	h.exec.set("ready", 0, 1)
	pod := testPod(v1.Container{Name: "c", ReadinessProbe: execProbe("ready", func(*v1.Probe) {})})
	h.m.AddPod(pod, map[string]string{"c": "id1"}, "10.42.0.5")
	h.call("ready")
	h.idle(1)
	h.fc.Step(10 * time.Second)
	h.call("ready")
	h.idle(1)
	reg := prometheus.NewRegistry()
	reg.MustRegister(pm)
	fams := gatherFamilies(t, reg)
	base := map[string]string{"probe_type": "Readiness", "container": "c", "pod": pod.Name,
		"namespace": pod.Namespace, "pod_uid": string(pod.UID)}
	for _, result := range []string{"successful", "failed"} {
		want := map[string]string{"result": result}
		for k, v := range base {
			want[k] = v
		}
		if s, ok := fams.Find("prober_probe_total", want); !ok || s.Value != 1 {
			t.Errorf("prober_probe_total%v = %v (found %v), want 1", want, s.Value, ok)
		}
	}
	h.m.RemovePod(pod.UID)
	if got := gatherFamilies(t, reg).Samples("prober_probe_total"); len(got) != 0 {
		t.Errorf("series left after RemovePod: %v", got)
	}
}

func gatherFamilies(t *testing.T, g prometheus.Gatherer) metricstest.Families {
	t.Helper()
	f, err := metricstest.Gather(g)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
