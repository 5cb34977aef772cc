package servers

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestStartOrchCluster starts three real orch servers (ORCH_BIN, the
// binary `bench/run.sh` builds; skipped without it), finds the leader and
// checks every endpoint answers, then that Stop leaves no process behind.
func TestStartOrchCluster(t *testing.T) {
	bin := os.Getenv("ORCH_BIN")
	if bin == "" {
		t.Skip("ORCH_BIN not set (path of an orch binary)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := StartOrchCluster(ctx, t.TempDir(), bin, 3)
	if s != nil {
		defer func() {
			if err := s.Stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
			for _, p := range s.Procs {
				if exited, _ := p.Exited(); !exited {
					t.Errorf("%s still running after Stop", p.Name)
				}
			}
		}()
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Kubeconfigs()); got != 3 || len(s.Procs) != 3 {
		t.Fatalf("%d endpoints, %d processes, want 3 and 3", got, len(s.Procs))
	}
	leader, err := s.Leader(ctx)
	if err != nil || leader < 0 || leader > 2 {
		t.Fatalf("leader = %d, %v", leader, err)
	}
	for i, k := range s.Kubeconfigs() {
		if err := probeReady(ctx, k); err != nil {
			t.Errorf("server %d not ready: %v", i+1, err)
		}
	}
	if _, total, err := s.RSSKiB(); err != nil || total == 0 {
		t.Errorf("RSS of the cluster = %d, %v", total, err)
	}
}

func TestStartOrchClusterRejectsZero(t *testing.T) {
	if _, err := StartOrchCluster(context.Background(), t.TempDir(), "/nonexistent", 0); err == nil {
		t.Fatal("0 servers: want an error")
	}
}
