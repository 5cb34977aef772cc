package cgroups

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// v2FakeMount is a plain directory standing in for a unified cgroup2 mount
// with every controller available (this host is cgroup v1/hybrid, so the v2
// path is only exercised here, never on a real v2 kernel).
func v2FakeMount(t *testing.T) string {
	mount := t.TempDir()
	if err := os.WriteFile(filepath.Join(mount, "cgroup.controllers"), []byte("cpuset cpu io memory hugetlb pids rdma misc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mount, "cgroup.subtree_control"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return mount
}

// fakeCgroupFS makes every new directory look like a cgroup: real cgroupfs
// creates cgroup.subtree_control in each new group.
func fakeSubtreeControl(t *testing.T, mount string, groups ...string) {
	for _, g := range groups {
		p := filepath.Join(mount, g, "cgroup.subtree_control")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); os.IsNotExist(err) {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func readFake(t *testing.T, mount, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mount, rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return strings.TrimSpace(string(b))
}

// TestV2ManagerQoSAndPods runs the Manager (QoS tiers, the three QoS
// classes' pod cgroups, an update) on a fake cgroup2 tree and checks the
// values kubelet writes on v2: cpu.weight from shares ((shares-2)*9999/262142+1),
// cpu.max "<quota|max> 100000", memory.max, pids.max.
func TestV2ManagerQoSAndPods(t *testing.T) {
	mount := v2FakeMount(t)
	fakeSubtreeControl(t, mount, "orch", "orch/kubepods", "orch/kubepods/burstable", "orch/kubepods/besteffort")
	m, err := New(zaptest.NewLogger(t), Config{Version: 2, Mountpoint: mount, PodPidsLimit: 1024,
		NodeAllocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Version() != 2 {
		t.Fatalf("version %d", m.Version())
	}
	if err := m.EnsureQoSTiers(); err != nil {
		t.Fatal(err)
	}
	guaranteed := testPod("g1", [2]corev1.ResourceList{rl("250m", "128Mi"), rl("250m", "128Mi")})
	burstable := testPod("b1", [2]corev1.ResourceList{rl("100m", ""), nil})
	besteffort := testPod("e1")
	besteffort.Spec.Containers = []corev1.Container{{Name: "a"}}
	paths := map[string]string{}
	for _, p := range []*corev1.Pod{guaranteed, burstable, besteffort} {
		path, err := m.EnsurePod(p)
		if err != nil {
			t.Fatalf("EnsurePod %s: %v", p.Name, err)
		}
		paths[string(p.UID)] = strings.TrimPrefix(path, "/")
	}
	for file, want := range map[string]string{
		"cgroup.subtree_control":              "+cpu +memory +pids",
		"orch/kubepods/cpu.weight":            "79", // 2048 shares
		"orch/kubepods/memory.max":            "1073741824",
		"orch/kubepods/burstable/cpu.weight":  "4",  // 100m: 102 shares
		"orch/kubepods/besteffort/cpu.weight": "1",  // 2 shares
		paths["g1"] + "/cpu.weight":           "10", // 250m: 256 shares
		paths["g1"] + "/cpu.max":              "25000 100000",
		paths["g1"] + "/memory.max":           "134217728",
		paths["g1"] + "/pids.max":             "1024",
		paths["b1"] + "/cpu.max":              "max 100000", // no cpu limit: unlimited
		paths["b1"] + "/memory.max":           "max",
		paths["e1"] + "/cpu.weight":           "1",
		paths["e1"] + "/memory.max":           "max",
	} {
		if got := readFake(t, mount, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if !strings.HasPrefix(paths["g1"], "orch/kubepods/podg1") || !strings.HasPrefix(paths["b1"], "orch/kubepods/burstable/podb1") {
		t.Errorf("pod paths %v", paths)
	}
	// A memory limit added to every container: memory.max follows on update.
	for i := range burstable.Spec.Containers {
		burstable.Spec.Containers[i].Resources.Limits = rl("", "64Mi")
	}
	if _, err := m.UpdatePod(burstable); err != nil {
		t.Fatal(err)
	}
	if got := readFake(t, mount, paths["b1"]+"/memory.max"); got != "67108864" {
		t.Errorf("memory.max after update = %q, want 67108864", got)
	}
	if got := m.ContainerUnified(); got["memory.oom.group"] != "1" {
		t.Errorf("ContainerUnified on v2 = %v", got)
	}
}

func TestContainerUnifiedV1(t *testing.T) {
	m := &Manager{be: &v1Backend{}}
	if got := m.ContainerUnified(); got != nil {
		t.Errorf("v1: %v", got)
	}
}
