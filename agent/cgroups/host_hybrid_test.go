package cgroups

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// newHybridFixture skips unless the host is v1 with a cgroup2 mount beside
// the v1 hierarchies (hybrid); it returns the fixture and that mount.
func newHybridFixture(t *testing.T, cfg Config) (*fixture, string) {
	t.Helper()
	f := newV1Fixture(t, cfg)
	unified := f.m.be.(*v1Backend).unified
	if len(unified) == 0 {
		t.Skip("no cgroup2 mount beside the v1 hierarchies: not a hybrid host")
	}
	return f, unified[0]
}

// runcDirs creates a pod's and its container's directories in the unified
// mount the way runc does on a hybrid host (parents included).
func runcDirs(t *testing.T, unified, parent, ctr string) string {
	t.Helper()
	dir := filepath.Join(unified, parent, ctr)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("mkdir %s: %v", dir, err)
	}
	return dir
}

func TestHostHybridRemovePodUnified(t *testing.T) {
	f, unified := newHybridFixture(t, Config{})
	m := f.m
	if err := m.EnsureQoSTiers(); err != nil {
		t.Fatal(err)
	}
	bp := testPod("hyb-burst", [2]corev1.ResourceList{rl("100m", "16Mi"), nil})
	parent, err := m.EnsurePod(bp)
	if err != nil {
		t.Fatal(err)
	}
	runcDirs(t, unified, parent, "ctr1")
	runcDirs(t, unified, parent, "ctr2/nested")
	// A pod whose only cgroup left is in the unified tree (the v1 side was
	// already removed by an older agent): PodCgroups must still list it.
	orphan := m.PodPath(corev1.PodQOSGuaranteed, "hyb-orphan")
	runcDirs(t, unified, orphan, "ctr")

	uids, err := m.PodCgroups()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(uids)
	if want := []types.UID{"hyb-burst", "hyb-orphan"}; !slices.Equal(uids, want) {
		t.Errorf("PodCgroups = %v, want %v", uids, want)
	}
	for _, uid := range []types.UID{"hyb-burst", "hyb-orphan"} {
		if err := m.RemovePod(context.Background(), uid); err != nil {
			t.Fatalf("RemovePod %s: %v", uid, err)
		}
	}
	f.gone(parent)
	f.gone(orphan)
	if uids, err := m.PodCgroups(); err != nil || len(uids) != 0 {
		t.Errorf("PodCgroups after remove = %v, %v", uids, err)
	}
}

func TestHostHybridRemoveWaitsForUnifiedTasks(t *testing.T) {
	f, unified := newHybridFixture(t, Config{RemoveTimeout: 300 * time.Millisecond})
	m := f.m
	if err := m.EnsureQoSTiers(); err != nil {
		t.Fatal(err)
	}
	p := testPod("hyb-busy", [2]corev1.ResourceList{nil, nil})
	parent, err := m.EnsurePod(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := runcDirs(t, unified, parent, "ctr")
	sleep := exec.Command("sleep", "30")
	f.start(sleep)
	procs := filepath.Join(dir, "cgroup.procs")
	if err := os.WriteFile(procs, []byte(strconv.Itoa(sleep.Process.Pid)), 0); err != nil {
		t.Fatalf("move pid into %s: %v", procs, err)
	}
	if err := m.RemovePod(context.Background(), p.UID); !errors.Is(err, ErrBusy) {
		t.Fatalf("RemovePod with a task in the unified tree = %v, want ErrBusy", err)
	}
	go func() { time.Sleep(100 * time.Millisecond); _ = sleep.Process.Kill() }()
	m.cfg.RemoveTimeout = 10 * time.Second
	if err := m.RemovePod(context.Background(), p.UID); err != nil {
		t.Fatalf("RemovePod after kill: %v", err)
	}
	f.gone(parent)
}
