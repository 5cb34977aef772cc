package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// Workqueue implements client-go's workqueue.MetricsProvider with
// upstream's workqueue_* metric names (component-base's workqueue
// provider), labelled by queue name. Give it to each queue's config
// (MetricsProvider), never to the global workqueue.SetProvider.
type Workqueue struct {
	depth, longest, unfinished *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

var _ workqueue.MetricsProvider = (*Workqueue)(nil)

// NewWorkqueue builds the provider and registers its metrics on reg (once
// per registry: a second call returns providers sharing the first's).
func NewWorkqueue(reg prometheus.Registerer) (*Workqueue, error) {
	l := []string{"name"}
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 10)
	w := &Workqueue{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "depth",
			Help: "Current depth of workqueue"}, l),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "adds_total",
			Help: "Total number of adds handled by workqueue"}, l),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "queue_duration_seconds",
			Help: "How long in seconds an item stays in workqueue before being requested.", Buckets: buckets}, l),
		work: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "work_duration_seconds",
			Help: "How long in seconds processing an item from workqueue takes.", Buckets: buckets}, l),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "unfinished_work_seconds",
			Help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. " +
				"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."}, l),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "longest_running_processor_seconds",
			Help: "How many seconds has the longest running processor for workqueue been running."}, l),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "retries_total",
			Help: "Total number of retries handled by workqueue"}, l),
	}
	var err error
	if w.depth, err = Register(reg, w.depth); err != nil {
		return nil, err
	}
	if w.adds, err = Register(reg, w.adds); err != nil {
		return nil, err
	}
	if w.latency, err = Register(reg, w.latency); err != nil {
		return nil, err
	}
	if w.work, err = Register(reg, w.work); err != nil {
		return nil, err
	}
	if w.unfinished, err = Register(reg, w.unfinished); err != nil {
		return nil, err
	}
	if w.longest, err = Register(reg, w.longest); err != nil {
		return nil, err
	}
	if w.retries, err = Register(reg, w.retries); err != nil {
		return nil, err
	}
	return w, nil
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewDepthMetric(name string) workqueue.GaugeMetric {
	return w.depth.WithLabelValues(name)
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewAddsMetric(name string) workqueue.CounterMetric {
	return w.adds.WithLabelValues(name)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return w.latency.WithLabelValues(name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return w.work.WithLabelValues(name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.unfinished.WithLabelValues(name)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.longest.WithLabelValues(name)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewRetriesMetric(name string) workqueue.CounterMetric {
	return w.retries.WithLabelValues(name)
}
