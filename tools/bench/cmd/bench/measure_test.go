package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestMeasureClusterTargets runs a tiny load against three real orch
// servers (ORCH_BIN; skipped without it), spread round-robin and all on
// the leader: every create and watch delivery must succeed, and every
// server's log is kept.
func TestMeasureClusterTargets(t *testing.T) {
	bin := os.Getenv("ORCH_BIN")
	if bin == "" {
		t.Skip("ORCH_BIN not set (path of an orch binary)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	logs := t.TempDir()
	f := &runFlags{orch: bin, workDir: t.TempDir(), idle: time.Second, keepLogs: logs}
	f.params = params{levels: []int{3}, duration: time.Second, payload: 100, watchers: 3, watchWrites: 5,
		watchInterval: 10 * time.Millisecond, namespace: "default"}
	for _, name := range []string{"orch-ha3", "orch-ha3-leader"} {
		target, err := parseOrchTarget(name)
		if err != nil {
			t.Fatal(err)
		}
		res := measure(ctx, zap.NewNop(), f, target)
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %v", name, res.Errors)
		}
		if len(res.Creates) != 1 || res.Creates[0].OK == 0 || res.Creates[0].Errors != 0 {
			t.Fatalf("%s creates: %+v", name, res.Creates)
		}
		if res.Watch == nil || res.Watch.Received != res.Watch.Expected {
			t.Fatalf("%s watch: %+v", name, res.Watch)
		}
		if !strings.Contains(res.Setup, "3 servers") {
			t.Fatalf("%s setup = %q", name, res.Setup)
		}
		for _, s := range []string{"s1", "s2", "s3"} {
			if _, err := os.Stat(filepath.Join(logs, name+"-"+s+"-orch.log")); err != nil {
				t.Errorf("log of %s %s not kept: %v", name, s, err)
			}
		}
	}
}
