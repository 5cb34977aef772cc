package report

import (
	"bytes"
	"strings"
	"testing"
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
