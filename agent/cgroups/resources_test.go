package cgroups

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

func rl(cpu, mem string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

// testPod returns a pod whose containers have the given requests/limits pairs.
func testPod(uid string, res ...[2]corev1.ResourceList) *corev1.Pod {
	p := &corev1.Pod{}
	p.UID, p.Name, p.Namespace = types.UID(uid), "p-"+uid, "default"
	for i, r := range res {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name: string(rune('a' + i)), Resources: corev1.ResourceRequirements{Requests: r[0], Limits: r[1]},
		})
	}
	return p
}

func TestPodResources(t *testing.T) {
	g := rl("500m", "64Mi")
	tests := []struct {
		name   string
		pod    *corev1.Pod
		pids   int64
		shares uint64
		quota  int64
		period uint64 // 0 = not set
		mem    int64
	}{
		{"guaranteed", testPod("g", [2]corev1.ResourceList{g, g}), 0, 512, 50000, 100000, 64 << 20},
		{"guaranteed two containers", testPod("g2", [2]corev1.ResourceList{g, g}, [2]corev1.ResourceList{g, g}), 0, 1024, 100000, 100000, 128 << 20},
		{"burstable memory limit only", testPod("b", [2]corev1.ResourceList{rl("250m", "32Mi"), rl("", "128Mi")}), 0, 256, -1, 0, 128 << 20},
		{"burstable cpu limit only", testPod("b2", [2]corev1.ResourceList{rl("100m", ""), rl("2", "")}), 0, 102, 200000, 100000, -1},
		{"burstable one container unlimited", testPod("b3", [2]corev1.ResourceList{g, g}, [2]corev1.ResourceList{rl("100m", ""), nil}), 0, 614, -1, 0, -1},
		{"besteffort", testPod("e", [2]corev1.ResourceList{nil, nil}), 0, 2, -1, 0, -1},
		{"pids limit", testPod("e2", [2]corev1.ResourceList{nil, nil}), 1024, 2, -1, 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := PodResources(tt.pod, tt.pids)
			if r.CPUShares == nil || *r.CPUShares != tt.shares {
				t.Errorf("shares = %v, want %d", deref(r.CPUShares), tt.shares)
			}
			if r.CPUQuota == nil || *r.CPUQuota != tt.quota {
				t.Errorf("quota = %v, want %d", deref(r.CPUQuota), tt.quota)
			}
			if got := deref(r.CPUPeriod); got != tt.period {
				t.Errorf("period = %d, want %d", got, tt.period)
			}
			if r.Memory == nil || *r.Memory != tt.mem {
				t.Errorf("memory = %v, want %d", deref(r.Memory), tt.mem)
			}
			if tt.pids > 0 && deref(r.PidsLimit) != tt.pids || tt.pids == 0 && r.PidsLimit != nil {
				t.Errorf("pids = %v, want %d", r.PidsLimit, tt.pids)
			}
		})
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func TestNodeResources(t *testing.T) {
	r := NodeResources(rl("2", "1Gi"))
	if deref(r.CPUShares) != 2048 || deref(r.Memory) != 1<<30 || r.PidsLimit != nil {
		t.Fatalf("NodeResources = shares %d mem %d pids %v", deref(r.CPUShares), deref(r.Memory), r.PidsLimit)
	}
	if r := NodeResources(nil); r.CPUShares != nil || r.Memory != nil {
		t.Fatal("empty allocatable must leave kubepods unlimited")
	}
}

func TestV2Values(t *testing.T) {
	tests := []struct {
		name string
		r    Resources
		want map[string]string
	}{
		{"guaranteed", PodResources(testPod("g", [2]corev1.ResourceList{rl("500m", "64Mi"), rl("500m", "64Mi")}), 0),
			map[string]string{"cpu.weight": "20", "cpu.max": "50000 100000", "memory.max": "67108864"}},
		{"burstable no limits", PodResources(testPod("b", [2]corev1.ResourceList{rl("1", ""), nil}), 100),
			map[string]string{"cpu.weight": "39", "cpu.max": "max 100000", "memory.max": "max", "pids.max": "100"}},
		{"besteffort tier", Resources{CPUShares: ptr(uint64(2))}, map[string]string{"cpu.weight": "1"}},
		{"empty", Resources{}, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, f := range tt.r.v2Values() {
				got[f.Name] = f.Value
				if want := map[string]string{"cpu.weight": "cpu", "cpu.max": "cpu", "memory.max": "memory", "pids.max": "pids"}[f.Name]; want != f.Controller {
					t.Errorf("%s controller = %s, want %s", f.Name, f.Controller, want)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("files = %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestV1Spec(t *testing.T) {
	s := v1Spec(PodResources(testPod("b", [2]corev1.ResourceList{rl("250m", "32Mi"), rl("", "128Mi")}), 50))
	if deref(s.CPU.Shares) != 256 || deref(s.CPU.Quota) != -1 || s.CPU.Period != nil {
		t.Errorf("cpu = %+v", s.CPU)
	}
	if s.Memory == nil || deref(s.Memory.Limit) != 128<<20 || s.Pids == nil || deref(s.Pids.Limit) != 50 {
		t.Errorf("memory %+v pids %+v", s.Memory, s.Pids)
	}
	if s := v1Spec(Resources{}); s.Memory != nil || s.Pids != nil || s.CPU.Shares != nil {
		t.Errorf("empty resources wrote values: %+v", s)
	}
}
