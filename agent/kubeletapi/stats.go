package kubeletapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Usage is a cumulative CPU time and memory reading.
type Usage struct {
	CPUNanos         uint64
	MemoryUsage      uint64
	MemoryWorkingSet uint64
}

// ContainerStats is one running container's reading.
type ContainerStats struct {
	Name  string
	Start time.Time
	Usage Usage
}

// PodStats is one pod's reading and its containers'.
type PodStats struct {
	Namespace, Name, UID string
	Start                time.Time
	Usage                Usage
	Containers           []ContainerStats
}

// Stats reads the node's and its pods' usage (the agent's cgroups).
type Stats interface {
	NodeName() string
	Node() (Usage, time.Time, error) // usage and the node's boot/start time
	Pods(ctx context.Context) ([]PodStats, error)
}

// serveResourceMetrics is kubelet's /metrics/resource (Prometheus text, the
// metric names and labels metrics-server reads).
func (s *Server) serveResourceMetrics(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	ts := now.UnixMilli()
	var b strings.Builder
	node, _, nodeErr := s.cfg.Stats.Node()
	pods, podsErr := s.cfg.Stats.Pods(r.Context())
	family := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s [STABLE] %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	family("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the container in core-seconds")
	forContainers(pods, func(p PodStats, c ContainerStats) {
		fmt.Fprintf(&b, "container_cpu_usage_seconds_total{%s} %g %d\n", containerLabels(p, c), seconds(c.Usage.CPUNanos), ts)
	})
	family("container_memory_working_set_bytes", "gauge", "Current working set of the container in bytes")
	forContainers(pods, func(p PodStats, c ContainerStats) {
		fmt.Fprintf(&b, "container_memory_working_set_bytes{%s} %d %d\n", containerLabels(p, c), c.Usage.MemoryWorkingSet, ts)
	})
	family("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds")
	forContainers(pods, func(p PodStats, c ContainerStats) {
		fmt.Fprintf(&b, "container_start_time_seconds{%s} %g %d\n", containerLabels(p, c), float64(c.Start.UnixNano())/1e9, ts)
	})
	if nodeErr == nil {
		family("node_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the node in core-seconds")
		fmt.Fprintf(&b, "node_cpu_usage_seconds_total %g %d\n", seconds(node.CPUNanos), ts)
		family("node_memory_working_set_bytes", "gauge", "Current working set of the node in bytes")
		fmt.Fprintf(&b, "node_memory_working_set_bytes %d %d\n", node.MemoryWorkingSet, ts)
	}
	family("pod_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the pod in core-seconds")
	for _, p := range pods {
		fmt.Fprintf(&b, "pod_cpu_usage_seconds_total{namespace=%q,pod=%q} %g %d\n", p.Namespace, p.Name, seconds(p.Usage.CPUNanos), ts)
	}
	family("pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes")
	for _, p := range pods {
		fmt.Fprintf(&b, "pod_memory_working_set_bytes{namespace=%q,pod=%q} %d %d\n", p.Namespace, p.Name, p.Usage.MemoryWorkingSet, ts)
	}
	scrapeErr := 0
	if nodeErr != nil || podsErr != nil {
		scrapeErr = 1
	}
	family("resource_scrape_error", "gauge", "1 if there was an error while getting container metrics, 0 otherwise")
	fmt.Fprintf(&b, "resource_scrape_error %d\n", scrapeErr)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

func seconds(ns uint64) float64 { return float64(ns) / 1e9 }

func containerLabels(p PodStats, c ContainerStats) string {
	return fmt.Sprintf("container=%q,namespace=%q,pod=%q", c.Name, p.Namespace, p.Name)
}

func forContainers(pods []PodStats, f func(PodStats, ContainerStats)) {
	for _, p := range pods {
		for _, c := range p.Containers {
			f(p, c)
		}
	}
}

// summary mirrors the parts of kubelet's statsapi Summary that readers use.
type summary struct {
	Node nodeStats  `json:"node"`
	Pods []podStats `json:"pods"`
}

type cpuStats struct {
	Time                 time.Time `json:"time"`
	UsageNanoCores       *uint64   `json:"usageNanoCores,omitempty"`
	UsageCoreNanoSeconds uint64    `json:"usageCoreNanoSeconds"`
}

type memStats struct {
	Time            time.Time `json:"time"`
	UsageBytes      uint64    `json:"usageBytes"`
	WorkingSetBytes uint64    `json:"workingSetBytes"`
}

type nodeStats struct {
	NodeName  string    `json:"nodeName"`
	StartTime time.Time `json:"startTime"`
	CPU       cpuStats  `json:"cpu"`
	Memory    memStats  `json:"memory"`
}

type containerStats struct {
	Name      string    `json:"name"`
	StartTime time.Time `json:"startTime"`
	CPU       cpuStats  `json:"cpu"`
	Memory    memStats  `json:"memory"`
}

type podRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
}

type podStats struct {
	PodRef     podRef           `json:"podRef"`
	StartTime  time.Time        `json:"startTime"`
	Containers []containerStats `json:"containers"`
	CPU        cpuStats         `json:"cpu"`
	Memory     memStats         `json:"memory"`
}

// serveSummary is kubelet's /stats/summary (JSON).
func (s *Server) serveSummary(w http.ResponseWriter, r *http.Request) {
	now := time.Now().UTC()
	node, start, err := s.cfg.Stats.Node()
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	pods, err := s.cfg.Stats.Pods(r.Context())
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	out := summary{Node: nodeStats{NodeName: s.cfg.Stats.NodeName(), StartTime: start.UTC(), CPU: cpuOf(now, node), Memory: memOf(now, node)},
		Pods: []podStats{}}
	for _, p := range pods {
		ps := podStats{PodRef: podRef{Name: p.Name, Namespace: p.Namespace, UID: p.UID}, StartTime: p.Start.UTC(),
			CPU: cpuOf(now, p.Usage), Memory: memOf(now, p.Usage), Containers: []containerStats{}}
		for _, c := range p.Containers {
			ps.Containers = append(ps.Containers, containerStats{Name: c.Name, StartTime: c.Start.UTC(),
				CPU: cpuOf(now, c.Usage), Memory: memOf(now, c.Usage)})
		}
		out.Pods = append(out.Pods, ps)
	}
	sort.Slice(out.Pods, func(i, j int) bool { return out.Pods[i].PodRef.UID < out.Pods[j].PodRef.UID })
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func cpuOf(t time.Time, u Usage) cpuStats {
	return cpuStats{Time: t, UsageCoreNanoSeconds: u.CPUNanos}
}

func memOf(t time.Time, u Usage) memStats {
	return memStats{Time: t, UsageBytes: u.MemoryUsage, WorkingSetBytes: u.MemoryWorkingSet}
}
