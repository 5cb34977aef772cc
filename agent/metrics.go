package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orch/orch/agent/kubelet"
	"github.com/orch/orch/agent/kubeletapi"
	"github.com/orch/orch/agent/prober"
	"github.com/orch/orch/internal/metrics"
)

// agentMetrics are the registries of the kubelet API's Prometheus
// endpoints (one set per agent, none global): /metrics (kubelet_* and the
// Go and process collectors), /metrics/cadvisor (container_* from the
// cgroups) and /metrics/probes (prober_probe_total).
type agentMetrics struct {
	prober *prober.Metrics
	probes *prometheus.Registry
}

func newAgentMetrics() agentMetrics {
	m := agentMetrics{prober: prober.NewMetrics(), probes: prometheus.NewRegistry()}
	m.probes.MustRegister(m.prober)
	return m
}

// kubelet is /metrics's registry; nil (the hand-written /metrics) when
// the agent runs without probe metrics (tests).
func (m agentMetrics) kubelet(cfg Config, k *kubelet.Kubelet) prometheus.Gatherer {
	if m.prober == nil {
		return nil
	}
	reg := metrics.NewRegistry()
	reg.MustRegister(kubeletapi.NewKubeletCollector(cfg.NodeName, k.Pods))
	return reg
}

// cadvisor is /metrics/cadvisor's registry; nil without cgroup stats.
func (m agentMetrics) cadvisor(stats kubeletapi.Stats) prometheus.Gatherer {
	src, ok := stats.(kubeletapi.CgroupSource)
	if !ok || m.prober == nil {
		return nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(kubeletapi.NewCadvisorCollector(src))
	return reg
}

// probeGatherer is /metrics/probes's registry (nil when unset).
func (m agentMetrics) probeGatherer() prometheus.Gatherer {
	if m.probes == nil {
		return nil
	}
	return m.probes
}
