package metricsapi

import (
	"strings"
	"testing"
	"time"
)

// resourceMetrics is what the agent's /metrics/resource serves
// (agent/kubeletapi/stats.go), with an escaped label value.
const resourceMetrics = `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 1.5 1700000000000
container_cpu_usage_seconds_total{container="side",namespace="default",pod="web"} 0.25 1700000000000
container_cpu_usage_seconds_total{container="c",namespace="ns",pod="we\"ird"} 2 1700000000000
container_cpu_usage_seconds_total{container="nomem",namespace="default",pod="half"} 2 1700000000000
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="app",namespace="default",pod="web"} 1048576 1700000000000
container_memory_working_set_bytes{container="side",namespace="default",pod="web"} 2048 1700000000000
container_memory_working_set_bytes{container="c",namespace="ns",pod="we\"ird"} 4096 1700000000000
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="app",namespace="default",pod="web"} 1.6999999e+09 1700000000000
node_cpu_usage_seconds_total 123.5 1700000000000
node_memory_working_set_bytes 8.589934592e+09 1700000000000
pod_cpu_usage_seconds_total{namespace="default",pod="web"} 1.75 1700000000000
resource_scrape_error 0
`

func TestParseResourceMetrics(t *testing.T) {
	now := time.Unix(1, 0)
	b, err := parseResourceMetrics([]byte(resourceMetrics), now)
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1700000000000)
	if b.Node == nil || b.Node.CPU != 123.5e9 || b.Node.Memory != 8<<30 || !b.Node.Time.Equal(at) {
		t.Errorf("node = %+v", b.Node)
	}
	web := b.Pods[PodRef{"default", "web"}]
	if app := web["app"]; app.CPU != 1.5e9 || app.Memory != 1<<20 || !app.Time.Equal(at) || app.Start.Unix() != 1699999900 {
		t.Errorf("web/app = %+v", app)
	}
	if side := web["side"]; side.CPU != 0.25e9 || side.Memory != 2048 || !side.Start.IsZero() {
		t.Errorf("web/side = %+v", side)
	}
	if _, ok := b.Pods[PodRef{"ns", `we"ird`}]["c"]; !ok {
		t.Errorf("escaped pod name not parsed: %v", b.Pods)
	}
	if _, ok := b.Pods[PodRef{"default", "half"}]; ok {
		t.Error("a pod with a container without memory was kept")
	}
}

func TestParseResourceMetricsDefaults(t *testing.T) {
	now := time.Unix(50, 0)
	b, err := parseResourceMetrics([]byte("node_cpu_usage_seconds_total 1\nnode_memory_working_set_bytes 2\n"), now)
	if err != nil || b.Node == nil || !b.Node.Time.Equal(now) {
		t.Fatalf("node without timestamps = %+v, %v", b.Node, err)
	}
	if b, _ := parseResourceMetrics([]byte("node_cpu_usage_seconds_total 1\n"), now); b.Node != nil {
		t.Errorf("a node without memory = %+v, want none", b.Node)
	}
}

func TestParseResourceMetricsErrors(t *testing.T) {
	for _, in := range []string{
		"node_cpu_usage_seconds_total\n",
		"node_cpu_usage_seconds_total abc\n",
		"node_cpu_usage_seconds_total 1 2 3\n",
		"node_cpu_usage_seconds_total 1 x\n",
		`container_cpu_usage_seconds_total{container="a 1` + "\n",
		`container_cpu_usage_seconds_total{container=a} 1` + "\n",
	} {
		if _, err := parseResourceMetrics([]byte(in), time.Now()); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: err = %v, want an error naming line 1", in, err)
		}
	}
}
