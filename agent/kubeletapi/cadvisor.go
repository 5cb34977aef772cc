package kubeletapi

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// CgroupStats is one cgroup's reading for /metrics/cadvisor: a pod's
// cgroup (Container and Name empty) or a container's.
type CgroupStats struct {
	// ID is the cgroup path (cAdvisor's id label), Name the runtime's
	// container ID (cAdvisor's name label; empty for a pod cgroup).
	ID, Name                  string
	Container, Pod, Namespace string
	Image                     string
	Start                     time.Time
	Usage                     Usage
	MemoryRSS, MemoryLimit    uint64 // limit 0: unlimited
	CPUQuota                  int64  // µs per period; 0: unlimited
	CPUPeriod, CPUShares      uint64
}

// CgroupSource lists the cgroups of the node's running pods and
// containers (the agent reads the cgroups it made, v1 or v2).
type CgroupSource interface {
	Cgroups(ctx context.Context) ([]CgroupStats, error)
}

// cadvisorTimeout bounds one scrape's read of the cgroups.
const cadvisorTimeout = 10 * time.Second

var cadvisorLabels = []string{"container", "id", "image", "name", "namespace", "pod"}

type cadvisorMetric struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(c *CgroupStats, now time.Time) (float64, bool)
}

func cadvisorDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, cadvisorLabels, nil)
}

func always(v float64) (float64, bool) { return v, true }

// cadvisorMetrics are cAdvisor's names, help and types for what the
// cgroups tell.
var cadvisorMetrics = []cadvisorMetric{
	{cadvisorDesc("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds."), prometheus.CounterValue,
		func(c *CgroupStats, _ time.Time) (float64, bool) { return always(seconds(c.Usage.CPUNanos)) }},
	{cadvisorDesc("container_memory_usage_bytes", "Current memory usage in bytes, including all memory regardless of when it was accessed"),
		prometheus.GaugeValue, func(c *CgroupStats, _ time.Time) (float64, bool) { return always(float64(c.Usage.MemoryUsage)) }},
	{cadvisorDesc("container_memory_working_set_bytes", "Current working set in bytes."), prometheus.GaugeValue,
		func(c *CgroupStats, _ time.Time) (float64, bool) { return always(float64(c.Usage.MemoryWorkingSet)) }},
	{cadvisorDesc("container_memory_rss", "Size of RSS in bytes."), prometheus.GaugeValue,
		func(c *CgroupStats, _ time.Time) (float64, bool) { return always(float64(c.MemoryRSS)) }},
	{cadvisorDesc("container_spec_memory_limit_bytes", "Memory limit for the container."), prometheus.GaugeValue,
		func(c *CgroupStats, _ time.Time) (float64, bool) { return always(float64(c.MemoryLimit)) }},
	{cadvisorDesc("container_spec_cpu_quota", "CPU quota of the container."), prometheus.GaugeValue,
		func(c *CgroupStats, _ time.Time) (float64, bool) { return float64(c.CPUQuota), c.CPUQuota > 0 }},
	{cadvisorDesc("container_spec_cpu_period", "CPU period of the container."), prometheus.GaugeValue,
		func(c *CgroupStats, _ time.Time) (float64, bool) { return float64(c.CPUPeriod), c.CPUPeriod > 0 }},
	{cadvisorDesc("container_spec_cpu_shares", "CPU share of the container."), prometheus.GaugeValue,
		func(c *CgroupStats, _ time.Time) (float64, bool) { return float64(c.CPUShares), c.CPUShares > 0 }},
	{cadvisorDesc("container_start_time_seconds", "Start time of the container since unix epoch in seconds."), prometheus.GaugeValue,
		func(c *CgroupStats, _ time.Time) (float64, bool) { return float64(c.Start.Unix()), !c.Start.IsZero() }},
	{cadvisorDesc("container_last_seen", "Last time a container was seen by the exporter"), prometheus.GaugeValue,
		func(_ *CgroupStats, now time.Time) (float64, bool) { return float64(now.Unix()), true }},
}

var cadvisorScrapeError = prometheus.NewDesc("container_scrape_error",
	"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)

// cadvisorCollector reads the cgroups on every scrape (no polling loop).
type cadvisorCollector struct{ src CgroupSource }

// NewCadvisorCollector is /metrics/cadvisor's collector over src.
func NewCadvisorCollector(src CgroupSource) prometheus.Collector { return cadvisorCollector{src: src} }

// Describe implements prometheus.Collector.
func (cadvisorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range cadvisorMetrics {
		ch <- m.desc
	}
	ch <- cadvisorScrapeError
}

// Collect implements prometheus.Collector.
func (c cadvisorCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), cadvisorTimeout)
	defer cancel()
	cgs, err := c.src.Cgroups(ctx)
	failed := 0.0
	if err != nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(cadvisorScrapeError, prometheus.GaugeValue, failed)
	now := time.Now()
	for i := range cgs {
		cg := &cgs[i]
		labels := []string{cg.Container, cg.ID, cg.Image, cg.Name, cg.Namespace, cg.Pod}
		for _, m := range cadvisorMetrics {
			if v, ok := m.value(cg, now); ok {
				ch <- prometheus.MustNewConstMetric(m.desc, m.typ, v, labels...)
			}
		}
	}
}
