package cgroups

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestV2BackendFakeTree runs the v2 backend against a plain directory tree
// standing in for a unified cgroup2 mount with cpu, memory and pids (this
// host's cgroup2 tree has none of them, see TestHostV2): it checks which
// subtree_control files get which controllers and the values written.
func TestV2BackendFakeTree(t *testing.T) {
	mount := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(mount, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(rel string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(mount, rel))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(data))
	}
	write("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n")
	write("cgroup.subtree_control", "memory io\n") // memory already on at the root
	write("orch/cgroup.subtree_control", "")
	write("orch/kubepods/cgroup.subtree_control", "cpu memory pids")

	b, err := newV2(mount)
	if err != nil {
		t.Fatal(err)
	}
	g := rl("500m", "64Mi")
	pod := testPod("u1", [2]corev1.ResourceList{g, g})
	if err := b.ensure("/orch/kubepods/podu1", PodResources(pod, 256)); err != nil {
		t.Fatalf("ensure: %v", err)
	}
	for file, want := range map[string]string{
		"cgroup.subtree_control":               "+cpu +pids", // only the missing ones are added
		"orch/cgroup.subtree_control":          "+cpu +memory +pids",
		"orch/kubepods/cgroup.subtree_control": "cpu memory pids", // untouched: all on
		"orch/kubepods/podu1/cpu.weight":       "20",
		"orch/kubepods/podu1/cpu.max":          "50000 100000",
		"orch/kubepods/podu1/memory.max":       "67108864",
		"orch/kubepods/podu1/pids.max":         "256",
	} {
		if got := read(file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(mount, "orch/kubepods/podu1/cgroup.subtree_control")); !os.IsNotExist(err) {
		t.Errorf("the pod's own subtree_control must be left to the runtime: %v", err)
	}
	write("orch/kubepods/podu1/memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 2\n")
	if n, err := b.oomKills("/orch/kubepods/podu1"); err != nil || n != 2 {
		t.Errorf("oomKills = %d, %v; want 2", n, err)
	}
}

func TestV2BackendOnlyAvailableControllers(t *testing.T) {
	mount := t.TempDir()
	if err := os.WriteFile(filepath.Join(mount, "cgroup.controllers"), []byte("hugetlb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := newV2(mount)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ensure("/orch/kubepods", NodeResources(rl("1", "1Gi"))); err != nil {
		t.Fatalf("ensure: %v", err)
	}
	entries, err := os.ReadDir(filepath.Join(mount, "orch/kubepods"))
	if err != nil || len(entries) != 0 {
		t.Errorf("wrote files for unavailable controllers: %v %v", entries, err)
	}
	if _, err := os.Stat(filepath.Join(mount, "cgroup.subtree_control")); !os.IsNotExist(err) {
		t.Errorf("touched the root's subtree_control: %v", err)
	}
}
