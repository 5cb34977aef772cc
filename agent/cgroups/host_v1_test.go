package cgroups

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// unlimitedV1 is what memory.limit_in_bytes reads when unlimited (-1 written).
const unlimitedV1 = "9223372036854771712"

func TestHostV1TiersAndPods(t *testing.T) {
	f := newV1Fixture(t, Config{NodeAllocatable: rl("1500m", "1Gi")})
	m := f.m
	if err := m.EnsureQoSTiers(); err != nil {
		t.Fatalf("EnsureQoSTiers: %v", err)
	}
	if err := m.EnsureQoSTiers(); err != nil {
		t.Fatalf("EnsureQoSTiers again: %v", err)
	}
	kp, bu, be := m.KubepodsPath(), m.TierPath(corev1.PodQOSBurstable), m.TierPath(corev1.PodQOSBestEffort)
	f.expect("cpu", kp, "cpu.shares", "1536")
	f.expect("memory", kp, "memory.limit_in_bytes", strconv.Itoa(1<<30))
	f.expect("cpu", bu, "cpu.shares", "2")
	f.expect("cpu", be, "cpu.shares", "2")
	for _, c := range []string{"cpuacct", "pids", "cpuset"} {
		f.read(c, bu, "cgroup.procs") // exists in every managed hierarchy
	}
	if f.read("cpuset", be, "cpuset.cpus") == "" || f.read("cpuset", be, "cpuset.mems") == "" {
		t.Error("cpuset.cpus/mems not copied from the parent")
	}

	g := rl("500m", "64Mi")
	gp := testPod("guar-1", [2]corev1.ResourceList{g, g})
	bp := testPod("burst-1", [2]corev1.ResourceList{rl("250m", "32Mi"), rl("", "128Mi")})
	ep := testPod("best-1", [2]corev1.ResourceList{nil, nil})
	parents := map[types.UID]string{}
	for _, p := range []*corev1.Pod{gp, bp, ep, gp} { // gp twice: idempotent
		parent, err := m.EnsurePod(p)
		if err != nil {
			t.Fatalf("EnsurePod %s: %v", p.Name, err)
		}
		parents[p.UID] = parent
	}
	if parents[gp.UID] != kp+"/podguar-1" || parents[bp.UID] != bu+"/podburst-1" || parents[ep.UID] != be+"/podbest-1" {
		t.Fatalf("parents = %v", parents)
	}
	f.expect("cpu", parents[gp.UID], "cpu.shares", "512")
	f.expect("cpu", parents[gp.UID], "cpu.cfs_period_us", "100000")
	f.expect("cpu", parents[gp.UID], "cpu.cfs_quota_us", "50000")
	f.expect("memory", parents[gp.UID], "memory.limit_in_bytes", strconv.Itoa(64<<20))
	f.expect("cpu", parents[bp.UID], "cpu.shares", "256")
	f.expect("cpu", parents[bp.UID], "cpu.cfs_quota_us", "-1")
	f.expect("memory", parents[bp.UID], "memory.limit_in_bytes", strconv.Itoa(128<<20))
	f.expect("cpu", parents[ep.UID], "cpu.shares", "2")
	f.expect("cpu", parents[ep.UID], "cpu.cfs_quota_us", "-1")
	f.expect("memory", parents[ep.UID], "memory.limit_in_bytes", unlimitedV1)
	f.expect("cpu", bu, "cpu.shares", "256") // burstable tier follows its pods' requests

	// A pod cgroup removed behind the Manager's back is made again: the
	// Manager skips rewriting what it wrote only while the cgroup exists.
	if err := os.Remove(m.be.(*v1Backend).dir("memory", parents[gp.UID])); err != nil {
		t.Fatal(err)
	}
	if _, err := m.EnsurePod(gp); err != nil {
		t.Fatalf("EnsurePod after removal: %v", err)
	}
	f.expect("memory", parents[gp.UID], "memory.limit_in_bytes", strconv.Itoa(64<<20))

	uids, err := m.PodCgroups()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(uids)
	if want := []types.UID{"best-1", "burst-1", "guar-1"}; !slices.Equal(uids, want) {
		t.Errorf("PodCgroups = %v, want %v", uids, want)
	}

	// UpdatePod: a larger memory limit for the burstable pod.
	bp.Spec.Containers[0].Resources.Limits = rl("", "256Mi")
	if _, err := m.UpdatePod(bp); err != nil {
		t.Fatalf("UpdatePod: %v", err)
	}
	f.expect("memory", parents[bp.UID], "memory.limit_in_bytes", strconv.Itoa(256<<20))

	for _, p := range []*corev1.Pod{gp, bp, ep} {
		if err := m.RemovePod(context.Background(), p.UID); err != nil {
			t.Fatalf("RemovePod %s: %v", p.Name, err)
		}
		if err := m.RemovePod(context.Background(), p.UID); err != nil {
			t.Fatalf("RemovePod %s again: %v", p.Name, err)
		}
		f.gone(parents[p.UID])
	}
	f.expect("cpu", bu, "cpu.shares", "2")
	if uids, err := m.PodCgroups(); err != nil || len(uids) != 0 {
		t.Errorf("PodCgroups after remove = %v, %v", uids, err)
	}
	if _, err := m.UpdatePod(bp); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdatePod after remove: %v, want ErrNotFound", err)
	}
}

func TestHostV1ProcsAndRemoveWaits(t *testing.T) {
	f := newV1Fixture(t, Config{RemoveTimeout: 300 * time.Millisecond})
	m := f.m
	if err := m.EnsureQoSTiers(); err != nil {
		t.Fatal(err)
	}
	p := testPod("procs-1", [2]corev1.ResourceList{rl("100m", "16Mi"), nil})
	parent, err := m.EnsurePod(p)
	if err != nil {
		t.Fatal(err)
	}
	// A container cgroup below the pod, as runc would create it.
	ctr := ContainerCgroupsPath(parent, "ctr1")
	if err := m.be.ensure(ctr, Resources{}); err != nil {
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "30")
	f.start(sleep)
	pid := sleep.Process.Pid
	if err := m.AddProc(ctr, pid); err != nil {
		t.Fatalf("AddProc: %v", err)
	}
	for _, c := range []string{"cpu", "memory", "pids", "cpuset", "cpuacct"} {
		if !slices.Contains(strings.Fields(f.read(c, ctr, "cgroup.procs")), strconv.Itoa(pid)) {
			t.Errorf("pid %d not in %s %s/cgroup.procs", pid, c, ctr)
		}
	}
	if procs, err := m.Procs(ctr); err != nil || !slices.Contains(procs, pid) {
		t.Errorf("Procs = %v, %v", procs, err)
	}
	// RemovePod kills nothing: it gives up with ErrBusy while the task runs.
	err = m.RemovePod(context.Background(), p.UID)
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("RemovePod with a task = %v, want ErrBusy", err)
	}
	if err := sleep.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("RemovePod killed the task: %v", err)
	}
	// Once the task is gone (and reaped), removal succeeds, leaf first.
	go func() { time.Sleep(100 * time.Millisecond); _ = sleep.Process.Kill() }()
	m.cfg.RemoveTimeout = 10 * time.Second
	if err := m.RemovePod(context.Background(), p.UID); err != nil {
		t.Fatalf("RemovePod after kill: %v", err)
	}
	f.gone(parent)
}

func TestHostV1MemoryLimitOOMKill(t *testing.T) {
	f := newV1Fixture(t, Config{})
	m := f.m
	if err := m.EnsureQoSTiers(); err != nil {
		t.Fatal(err)
	}
	limit := rl("500m", "32Mi")
	p := testPod("oom-1", [2]corev1.ResourceList{limit, limit})
	parent, err := m.EnsurePod(p)
	if err != nil {
		t.Fatal(err)
	}
	f.expect("memory", parent, "memory.limit_in_bytes", strconv.Itoa(32<<20))
	ctr := ContainerCgroupsPath(parent, "ctr-oom")
	if err := m.be.ensure(ctr, Resources{}); err != nil {
		t.Fatal(err)
	}
	if m.OOMKilled(ctr) {
		t.Fatal("OOMKilled before anything ran")
	}

	cmd := helper("alloc")
	in := f.start(cmd)
	if err := m.AddProc(ctr, cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("helper allocating 256MiB under a 32MiB limit: %v, want killed", err)
	}
	ws := exit.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper exit = %v, want SIGKILL (137)", ws)
	}
	if !m.OOMKilled(ctr) {
		t.Error("OOMKilled(container) = false after an OOM kill")
	}
	if n, err := m.OOMKillCount(ctr); err != nil || n < 1 {
		t.Errorf("OOMKillCount = %d, %v", n, err)
	}
	t.Logf("helper exit: %v; memory.oom_control: %q", ws.Signal(), f.read("memory", ctr, "memory.oom_control"))
	if _, err := m.OOMKillCount(ContainerCgroupsPath(parent, "missing")); !errors.Is(err, ErrNotFound) {
		t.Errorf("OOMKillCount(missing) = %v, want ErrNotFound", err)
	}
	if err := m.RemovePod(context.Background(), p.UID); err != nil {
		t.Fatalf("RemovePod: %v", err)
	}
	f.gone(parent)
}

func TestHostOOMScoreAdjClamp(t *testing.T) {
	requireRoot(t)
	f := newFixture(t, Config{Root: randomRoot(t)})
	own, err := OwnOOMScoreAdj()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{-997, 1000, 500} {
		cmd := helper("oomscore")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		in := f.start(cmd)
		got, err := f.m.ApplyOOMScoreAdj(cmd.Process.Pid, want)
		if err != nil {
			t.Fatalf("ApplyOOMScoreAdj(%d): %v", want, err)
		}
		if exp := max(want, own); got != exp {
			t.Errorf("ApplyOOMScoreAdj(%d) = %d, want %d (own %d)", want, got, exp, own)
		}
		if _, err := in.Write([]byte("go\n")); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
		// The child reads its own /proc/self/oom_score_adj.
		if child := strings.TrimSpace(string(data)); child != strconv.Itoa(got) {
			t.Errorf("child's /proc/self/oom_score_adj = %q, want %d", child, got)
		}
	}
	// The premise: below the agent's own score the kernel refuses without
	// CAP_SYS_RESOURCE. Informational only (a fully privileged host may allow it).
	cmd := exec.Command("sleep", "30")
	f.start(cmd)
	file := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/oom_score_adj"
	t.Logf("own %d; writing %d directly: %v", own, own-1, os.WriteFile(file, []byte(strconv.Itoa(own-1)), 0))
}
