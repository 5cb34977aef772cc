package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

func TestManagedRestartsDeadContainerd(t *testing.T) {
	requireHost(t)
	ctx := context.Background()
	d, err := startDaemon(ctx, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.teardown)
	cfg, err := os.ReadFile(filepath.Join(d.m.cfg.StateDir, "config.toml"))
	if err != nil || !strings.Contains(string(cfg), `disabled_plugins = ["io.containerd.grpc.v1.cri"`) {
		t.Fatalf("config: %v\n%s", err, cfg)
	}
	d.m.mu.Lock()
	pid := d.m.cmd.Process.Pid
	d.m.mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		d.m.mu.Lock()
		newPid := d.m.cmd.Process.Pid
		d.m.mu.Unlock()
		if newPid != pid {
			if _, err := d.client.Version(ctx); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("containerd was not restarted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(filepath.Join(d.m.cfg.StateDir, pidFileName))
	if strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
		t.Error("pid file not updated")
	}
	if err := d.m.Stop(); err != nil {
		t.Fatal(err)
	}
	d.stopped = true
	if _, err := os.Stat(d.m.Address()); err == nil {
		if _, err := d.client.Version(ctx); err == nil {
			t.Error("containerd still answers after Stop")
		}
	}
}

func TestManagedEnvSetsGOGCUnlessGiven(t *testing.T) {
	got := managedEnv([]string{"PATH=/bin"})
	if !slices.Contains(got, "GOGC=25") || !slices.Contains(got, "OTEL_SDK_DISABLED=true") || !slices.Contains(got, "PATH=/bin") {
		t.Errorf("default: %v", got)
	}
	got = managedEnv([]string{"GOGC=200"})
	if slices.Contains(got, "GOGC=25") || !slices.Contains(got, "GOGC=200") {
		t.Errorf("operator's GOGC: %v", got)
	}
}
