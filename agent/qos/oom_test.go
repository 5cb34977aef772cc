package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestOOMScoreAdj(t *testing.T) {
	const capacity = 4 << 30 // 4 GiB
	g := rl("1", "1Gi")
	prio := func(p *corev1.Pod, class string, v int32, ann map[string]string) *corev1.Pod {
		p.Spec.PriorityClassName, p.Spec.Priority, p.Annotations = class, &v, ann
		return p
	}
	burst := pod(nil, ctr("a", rl("", "1Gi"), nil), ctr("b", rl("", "2Gi"), nil))
	tiny := pod(nil, ctr("a", rl("100m", "1"), nil))
	huge := pod(nil, ctr("a", rl("", "8Gi"), nil))
	withSidecar := pod([]corev1.Container{sidecar("s", rl("", "128Mi"), nil)}, ctr("a", rl("", "2Gi"), nil))
	tests := []struct {
		name string
		pod  *corev1.Pod
		ctr  *corev1.Container
		want int
	}{
		{"guaranteed", pod(nil, ctr("a", g, g)), nil, -997},
		{"besteffort", pod(nil, ctr("a", nil, nil)), nil, 1000},
		{"burstable 1/4", burst, &burst.Spec.Containers[0], 750},
		{"burstable 1/2", burst, &burst.Spec.Containers[1], 500},
		{"burstable tiny request -> 999", tiny, &tiny.Spec.Containers[0], 999},
		{"burstable over capacity -> 3", huge, &huge.Spec.Containers[0], 3},
		{"sidecar capped by smallest app container", withSidecar, &withSidecar.Spec.InitContainers[0], 500},
		{"app next to sidecar", withSidecar, &withSidecar.Spec.Containers[0], 500},
		{"node critical besteffort", prio(pod(nil, ctr("a", nil, nil)), SystemNodeCritical, SystemCriticalPriority+1000, nil), nil, -997},
		{"cluster critical stays besteffort", prio(pod(nil, ctr("a", nil, nil)), "system-cluster-critical", SystemCriticalPriority, nil), nil, 1000},
		{"node critical name, low priority", prio(pod(nil, ctr("a", nil, nil)), SystemNodeCritical, 0, nil), nil, 1000},
		{"static node critical", prio(pod(nil, ctr("a", nil, nil)), SystemNodeCritical, 0, map[string]string{"kubernetes.io/config.source": "file"}), nil, -997},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.ctr
			if c == nil {
				c = &tt.pod.Spec.Containers[0]
			}
			if got := OOMScoreAdj(tt.pod, c, capacity); got != tt.want {
				t.Errorf("OOMScoreAdj = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestClampOOMScoreAdj(t *testing.T) {
	tests := []struct{ want, own, got int }{
		{-997, 0, 0}, {-997, -999, -997}, {1000, 0, 1000}, {500, 500, 500}, {3, 0, 3}, {-1, 0, 0},
	}
	for _, tt := range tests {
		if got := ClampOOMScoreAdj(tt.want, tt.own); got != tt.got {
			t.Errorf("ClampOOMScoreAdj(%d, %d) = %d, want %d", tt.want, tt.own, got, tt.got)
		}
	}
}
