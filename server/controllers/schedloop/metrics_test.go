package schedloop

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orch/orch/internal/metrics"
	"github.com/orch/orch/internal/metrics/metricstest"
	"github.com/orch/orch/server/controllers/kit"
)

func TestSchedulerMetrics(t *testing.T) {
	client := fake.NewSimpleClientset(node("n1", "1"), pod("fits", "500m"), pod("toobig", "4"))
	bindReactor(client, true)
	reg := metrics.NewRegistry()
	// Two terms on one registry: the second reuses the first's metrics.
	for term := 0; term < 2; term++ {
		kc := kit.New(client, zaptest.NewLogger(t), kit.Options{Metrics: reg})
		c, err := NewShared(kc)
		if err != nil {
			t.Fatalf("term %d: %v", term, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := kc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); _ = c.Run(ctx) }()
		waitFor(t, "attempts", func() bool {
			f := scrape(t, reg)
			_, sched := f.Find("scheduler_schedule_attempts_total", map[string]string{"result": "scheduled", "profile": "default-scheduler"})
			_, unsched := f.Find("scheduler_schedule_attempts_total", map[string]string{"result": "unschedulable"})
			p, _ := f.Find("scheduler_pending_pods", map[string]string{"queue": "unschedulable"})
			return sched && unsched && p.Value == 1
		})
		f := scrape(t, reg)
		for _, name := range []string{"scheduler_scheduling_attempt_duration_seconds", "workqueue_adds_total", "workqueue_depth"} {
			want := map[string]string{}
			if name != "scheduler_scheduling_attempt_duration_seconds" {
				want["name"] = "scheduler"
			}
			if _, ok := f.Find(name, want); !ok {
				t.Errorf("%s%v missing; have %s", name, want, f.Names())
			}
		}
		cancel()
		<-done
		kc.Shutdown()
	}
}

func scrape(t *testing.T, reg *prometheus.Registry) metricstest.Families {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	f, err := metricstest.Parse(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
