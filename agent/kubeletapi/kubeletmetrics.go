package kubeletapi

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/internal/metrics"
)

var (
	runningPodsDesc = prometheus.NewDesc("kubelet_running_pods",
		"Number of pods that have a running pod sandbox", nil, nil)
	runningContainersDesc = prometheus.NewDesc("kubelet_running_containers",
		"Number of containers currently running", []string{"container_state"}, nil)
	nodeNameDesc = prometheus.NewDesc("kubelet_node_name",
		"The node's name. The count is always 1.", []string{"node"}, nil)
)

// podStartBuckets are kubelet's buckets for kubelet_pod_start_duration_seconds.
var podStartBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900,
	1200, 1800, 2700, 3600}

// kubeletCollector is kubelet's /metrics from the node's pods, computed
// when scraped. kubelet_pod_start_duration_seconds observes each pod once,
// at the first scrape that sees it running: from status.startTime (when
// the agent first took the pod) to the last of its containers' start.
type kubeletCollector struct {
	node  string
	pods  func() []*corev1.Pod
	start prometheus.Histogram

	mu   sync.Mutex
	seen map[types.UID]bool
}

// NewKubeletCollector is /metrics's kubelet collector for node.
func NewKubeletCollector(node string, pods func() []*corev1.Pod) prometheus.Collector {
	return &kubeletCollector{node: node, pods: pods, seen: map[types.UID]bool{},
		start: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "pod_start_duration_seconds",
			Help:    "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run",
			Buckets: podStartBuckets})}
}

// Describe implements prometheus.Collector.
func (k *kubeletCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runningPodsDesc
	ch <- runningContainersDesc
	ch <- nodeNameDesc
	k.start.Describe(ch)
}

// Collect implements prometheus.Collector.
func (k *kubeletCollector) Collect(ch chan<- prometheus.Metric) {
	pods := k.pods()
	running, states := countRunning(pods)
	ch <- prometheus.MustNewConstMetric(runningPodsDesc, prometheus.GaugeValue, float64(running))
	for _, st := range []string{"created", "exited", "running"} {
		ch <- prometheus.MustNewConstMetric(runningContainersDesc, prometheus.GaugeValue, float64(states[st]), st)
	}
	ch <- prometheus.MustNewConstMetric(nodeNameDesc, prometheus.GaugeValue, 1, k.node)
	k.observeStarts(pods)
	k.start.Collect(ch)
}

// observeStarts observes the pods seen running for the first time and
// forgets the pods that are gone.
func (k *kubeletCollector) observeStarts(pods []*corev1.Pod) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		now[p.UID] = true
		if k.seen[p.UID] || p.Status.Phase != corev1.PodRunning || p.Status.StartTime == nil {
			continue
		}
		var last *corev1.ContainerStateRunning
		for i := range p.Status.ContainerStatuses {
			if r := p.Status.ContainerStatuses[i].State.Running; r != nil && (last == nil || r.StartedAt.After(last.StartedAt.Time)) {
				last = r
			}
		}
		if last == nil {
			continue
		}
		k.seen[p.UID] = true
		k.start.Observe(max(0, last.StartedAt.Sub(p.Status.StartTime.Time).Seconds()))
	}
	for uid := range k.seen {
		if !now[uid] {
			delete(k.seen, uid)
		}
	}
}

// countRunning counts the running pods and the containers by state.
func countRunning(pods []*corev1.Pod) (int, map[string]int) {
	running := 0
	states := map[string]int{"running": 0, "exited": 0, "created": 0}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning {
			running++
		}
		for _, c := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			switch {
			case c.State.Running != nil:
				states["running"]++
			case c.State.Terminated != nil:
				states["exited"]++
			case c.ContainerID != "":
				states["created"]++
			}
		}
	}
	return running, states
}

// routeMetrics adds the Prometheus endpoints of the Config.
func (s *Server) routeMetrics() {
	switch {
	case s.cfg.Metrics != nil:
		s.mux.Handle("GET /metrics", metrics.Handler(s.cfg.Metrics))
	case s.cfg.Pods != nil:
		s.mux.HandleFunc("GET /metrics", s.serveMetrics)
	}
	if s.cfg.CadvisorMetrics != nil {
		s.mux.Handle("GET /metrics/cadvisor", metrics.Handler(s.cfg.CadvisorMetrics))
	}
	if s.cfg.ProbeMetrics != nil {
		s.mux.Handle("GET /metrics/probes", metrics.Handler(s.cfg.ProbeMetrics))
	}
}
