package schedloop

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orch/orch/internal/metrics"
)

// schedMetrics are kube-scheduler's metrics under its names: attempts and
// their duration by result (scheduled, unschedulable, error) and profile,
// and the pending pods by queue (active: queued to be tried now;
// unschedulable: waiting for a cluster event), read at scrape time.
type schedMetrics struct {
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	pending  *pendingPods
}

// newSchedMetrics registers the metrics on reg (nil: kept unregistered),
// reusing those of an earlier term, and points the pending gauge at r.
func newSchedMetrics(reg prometheus.Registerer, r *run) (*schedMetrics, error) {
	l := []string{"result", "profile"}
	m := &schedMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "scheduler", Name: "schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem."}, l),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "scheduler", Name: "scheduling_attempt_duration_seconds",
			Help: "Scheduling attempt latency in seconds (scheduling algorithm + binding)", Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}, l),
		pending: &pendingPods{},
	}
	var err error
	if m.attempts, err = metrics.Register(reg, m.attempts); err != nil {
		return nil, err
	}
	if m.duration, err = metrics.Register(reg, m.duration); err != nil {
		return nil, err
	}
	if m.pending, err = metrics.Register(reg, m.pending); err != nil {
		return nil, err
	}
	m.pending.set(r)
	return m, nil
}

// attempt records one scheduling attempt that began at start.
func (m *schedMetrics) attempt(result string, start time.Time) {
	m.attempts.WithLabelValues(result, SchedulerName).Inc()
	m.duration.WithLabelValues(result, SchedulerName).Observe(time.Since(start).Seconds())
}

var pendingDesc = prometheus.NewDesc("scheduler_pending_pods",
	"Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'unschedulable' means number of pods in unschedulablePods.",
	[]string{"queue"}, nil)

// pendingPods reads the current term's queue when scraped.
type pendingPods struct {
	mu sync.Mutex
	r  *run
}

func (p *pendingPods) set(r *run) {
	p.mu.Lock()
	p.r = r
	p.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (p *pendingPods) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

// Collect implements prometheus.Collector.
func (p *pendingPods) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	r := p.r
	p.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	unsched := len(r.unschedulable)
	r.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(r.queue.Len()), "active")
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(unsched), "unschedulable")
}
