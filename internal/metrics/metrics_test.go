package metrics_test

import (
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"

	"github.com/orch/orch/internal/metrics"
	"github.com/orch/orch/internal/metrics/metricstest"
)

func TestRegistryHasGoAndProcessCollectors(t *testing.T) {
	reg := metrics.NewRegistry()
	fams := serve(t, reg)
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("%s missing; have %s", name, fams.Names())
		}
	}
}

func TestWorkqueueProvider(t *testing.T) {
	reg := metrics.NewRegistry()
	p, err := metrics.NewWorkqueue(reg)
	if err != nil {
		t.Fatal(err)
	}
	// A second provider on the same registry shares the first's metrics.
	p2, err := metrics.NewWorkqueue(reg)
	if err != nil {
		t.Fatalf("second provider: %v", err)
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "demo", MetricsProvider: p})
	defer q.ShutDown()
	q2 := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "other", MetricsProvider: p2})
	defer q2.ShutDown()
	q.Add("a")
	q.Add("b")
	q2.Add("x")
	k, _ := q.Get()
	q.AddRateLimited(k)
	q.Done(k)
	fams := serve(t, reg)
	checks := []struct {
		name  string
		queue string
		value float64
	}{
		{"workqueue_adds_total", "demo", 2},
		{"workqueue_depth", "demo", 1},
		{"workqueue_retries_total", "demo", 1},
		{"workqueue_queue_duration_seconds", "demo", 1},
		{"workqueue_work_duration_seconds", "demo", 1},
		{"workqueue_adds_total", "other", 1},
	}
	for _, c := range checks {
		s, ok := fams.Find(c.name, map[string]string{"name": c.queue})
		if !ok {
			t.Errorf("%s{name=%q} missing; have %s", c.name, c.queue, fams.Names())
			continue
		}
		if s.Value != c.value {
			t.Errorf("%s{name=%q} = %v, want %v", c.name, c.queue, s.Value, c.value)
		}
	}
	for _, name := range []string{"workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds"} {
		if _, ok := fams.Find(name, map[string]string{"name": "demo"}); !ok {
			t.Errorf("%s missing", name)
		}
	}
}

func serve(t *testing.T, reg prometheus.Gatherer) metricstest.Families {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	fams, err := metricstest.Parse(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}
