package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/orch/orch/tools/bench/internal/load"
)

func TestByProc(t *testing.T) {
	if got := byProc(map[string]int64{"orch": 1024}); got != "" {
		t.Fatalf("one process: %q", got)
	}
	got := byProc(map[string]int64{"kine": 1024, "kube-apiserver": 2048})
	if got != " (kube-apiserver 2.0 MiB + kine 1.0 MiB)" {
		t.Fatalf("baseline: %q", got)
	}
	got = byProc(map[string]int64{"orch-s2": 1024, "orch-s1": 1024, "orch-s3": 1024})
	if got != " (orch-s1 1.0 MiB + orch-s2 1.0 MiB + orch-s3 1.0 MiB)" {
		t.Fatalf("cluster: %q", got)
	}
}

func TestSetupRowOnlyForClusters(t *testing.T) {
	var b bytes.Buffer
	(&Run{Targets: []*Target{{Name: "orch"}}}).Markdown(&b)
	if strings.Contains(b.String(), "clients on") {
		t.Fatalf("setup row without a cluster:\n%s", b.String())
	}
	b.Reset()
	(&Run{Targets: []*Target{{Name: "orch"}, {Name: "orch-ha3", Setup: "3 servers"}}}).Markdown(&b)
	if !strings.Contains(b.String(), "| servers, clients on | 1 server | 3 servers |") {
		t.Fatalf("setup row missing:\n%s", b.String())
	}
}

func TestRatios(t *testing.T) {
	level := func(n int, perSecond float64, p99 time.Duration) load.CreateResult {
		return load.CreateResult{Clients: n, PerSecond: perSecond, Latency: load.Summary{P99: p99}}
	}
	run := &Run{Targets: []*Target{
		{Name: "orch", Creates: []load.CreateResult{level(64, 6000, 20*time.Millisecond)}},
		{Name: "datastore", Creates: []load.CreateResult{level(64, 24000, time.Millisecond)}},
		{Name: "baseline", Creates: []load.CreateResult{level(64, 1000, 200*time.Millisecond)}},
	}}
	var b bytes.Buffer
	run.Markdown(&b)
	if !strings.Contains(b.String(), "| 64 | 6.00x | 0.10x | 0.25x |") {
		t.Fatalf("ratio row missing:\n%s", b.String())
	}
	b.Reset()
	(&Run{Targets: run.Targets[:1]}).Markdown(&b)
	if strings.Contains(b.String(), "orch / baseline") {
		t.Fatalf("ratios without a baseline or datastore:\n%s", b.String())
	}
}
