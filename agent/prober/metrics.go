package prober

import (
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Metrics is kubelet's prober_probe_total (served on /metrics/probes):
// every probe run counted by probe type and result (successful, failed,
// unknown for an errored probe), per container. A pod's series are
// dropped when it is removed, so the cardinality follows the node's pods.
type Metrics struct {
	total *prometheus.CounterVec
}

var _ prometheus.Collector = (*Metrics)(nil)

// NewMetrics builds the (unregistered) probe metrics.
func NewMetrics() *Metrics {
	return &Metrics{total: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "prober", Name: "probe_total",
		Help: "Cumulative number of a liveness, readiness or startup probe for a container by result."},
		[]string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"})}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) { m.total.Describe(ch) }

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) { m.total.Collect(ch) }

// observe counts one probe run; result is upstream's label value.
func (m *Metrics) observe(kind Kind, result string, pod *v1.Pod, container string) {
	if m == nil || pod == nil {
		return
	}
	m.total.WithLabelValues(kind.String(), result, container, pod.Name, pod.Namespace, string(pod.UID)).Inc()
}

// forget drops a removed pod's series.
func (m *Metrics) forget(uid types.UID) {
	if m == nil {
		return
	}
	m.total.DeletePartialMatch(prometheus.Labels{"pod_uid": string(uid)})
}

// Probe results as upstream labels them.
const (
	resultSuccessful = "successful"
	resultFailed     = "failed"
	resultUnknown    = "unknown"
)
