package cgroups

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

// cgroup2Mount returns the host's cgroup2 mount: /sys/fs/cgroup on a unified
// host, /sys/fs/cgroup/unified on a hybrid one.
func cgroup2Mount() (string, bool) {
	for _, p := range []string{DefaultMountpoint, filepath.Join(DefaultMountpoint, "unified")} {
		var st unix.Statfs_t
		if unix.Statfs(p, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			return p, true
		}
	}
	return "", false
}

// TestHostV2 runs the v2 backend on the host's cgroup2 tree. On a hybrid
// host that tree has none of cpu/memory/pids (they are bound to v1), so only
// the directory layout, process membership and removal are exercised; the
// values are checked for the controllers that are available.
func TestHostV2(t *testing.T) {
	requireRoot(t)
	mount, ok := cgroup2Mount()
	if !ok {
		t.Skip("no cgroup2 filesystem mounted")
	}
	f := newFixture(t, Config{Root: randomRoot(t), Version: 2, Mountpoint: mount,
		NodeAllocatable: rl("2", "1Gi"), RemoveTimeout: 200 * time.Millisecond})
	m := f.m
	be := m.be.(*v2Backend)
	t.Logf("cgroup2 at %s, controllers available: %v", mount, be.available)
	if err := m.EnsureQoSTiers(); err != nil {
		t.Fatalf("EnsureQoSTiers: %v", err)
	}
	g := rl("500m", "64Mi")
	gp := testPod("v2g", [2]corev1.ResourceList{g, g})
	bp := testPod("v2b", [2]corev1.ResourceList{rl("250m", ""), nil})
	gparent, err := m.EnsurePod(gp)
	if err != nil {
		t.Fatalf("EnsurePod: %v", err)
	}
	bparent, err := m.EnsurePod(bp)
	if err != nil {
		t.Fatalf("EnsurePod: %v", err)
	}
	want := map[string]map[string]string{
		m.KubepodsPath():                   {"cpu.weight": "79", "memory.max": strconv.Itoa(1 << 30)},
		m.TierPath(corev1.PodQOSBurstable): {"cpu.weight": "10"},
		gparent:                            {"cpu.weight": "20", "cpu.max": "50000 100000", "memory.max": strconv.Itoa(64 << 20)},
		bparent:                            {"cpu.weight": "10", "cpu.max": "max 100000", "memory.max": "max"},
	}
	for group, files := range want {
		if _, err := os.Stat(m.Dir("", group)); err != nil {
			t.Fatalf("%s: %v", group, err)
		}
		for file, v := range files {
			if be.available[strings.Split(file, ".")[0]] {
				f.expect("", group, file, v)
			}
		}
	}
	sleep := exec.Command("sleep", "30")
	f.start(sleep)
	if err := m.AddProc(gparent, sleep.Process.Pid); err != nil {
		t.Fatalf("AddProc: %v", err)
	}
	if procs, err := m.Procs(gparent); err != nil || !slices.Contains(procs, sleep.Process.Pid) {
		t.Fatalf("Procs = %v, %v", procs, err)
	}
	if err := m.RemovePod(context.Background(), gp.UID); !errors.Is(err, ErrBusy) {
		t.Fatalf("RemovePod with a task = %v, want ErrBusy", err)
	}
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	m.cfg.RemoveTimeout = 10 * time.Second
	for _, uid := range []string{"v2g", "v2b"} {
		if err := m.RemovePod(context.Background(), testPod(uid).UID); err != nil {
			t.Fatalf("RemovePod %s: %v", uid, err)
		}
	}
	for _, p := range []string{gparent, bparent} {
		if _, err := os.Stat(m.Dir("", p)); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
	if uids, err := m.PodCgroups(); err != nil || len(uids) != 0 {
		t.Errorf("PodCgroups = %v, %v", uids, err)
	}
}
