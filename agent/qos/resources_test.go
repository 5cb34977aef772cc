package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPodRequestsLimits(t *testing.T) {
	withOverhead := pod(nil, ctr("a", rl("100m", "10Mi"), rl("200m", "")))
	withOverhead.Spec.Overhead = rl("50m", "5Mi")
	tests := []struct {
		name           string
		pod            *corev1.Pod
		reqCPU, reqMem string
		limCPU, limMem string
	}{
		{"sum of app containers", pod(nil, ctr("a", rl("100m", "10Mi"), rl("1", "20Mi")), ctr("b", rl("200m", "5Mi"), rl("1", "20Mi"))),
			"300m", "15Mi", "2", "40Mi"},
		{"init container larger", pod([]corev1.Container{ctr("i", rl("2", "1Mi"), nil)}, ctr("a", rl("100m", "10Mi"), nil)),
			"2", "10Mi", "", ""},
		{"init after sidecar adds sidecar", pod([]corev1.Container{sidecar("s", rl("500m", "10Mi"), nil), ctr("i", rl("1", "1Mi"), nil)}, ctr("a", rl("100m", "10Mi"), nil)),
			"1500m", "20Mi", "", ""},
		{"init before sidecar does not", pod([]corev1.Container{ctr("i", rl("1", "1Mi"), nil), sidecar("s", rl("500m", "10Mi"), nil)}, ctr("a", rl("100m", "10Mi"), nil)),
			"1", "20Mi", "", ""},
		{"sidecars sum into app", pod([]corev1.Container{sidecar("s1", rl("100m", ""), rl("200m", "")), sidecar("s2", rl("100m", ""), rl("200m", ""))}, ctr("a", rl("100m", ""), rl("200m", ""))),
			"300m", "", "600m", ""},
		{"overhead added to requests and set limits only", withOverhead, "150m", "15Mi", "250m", ""},
		{"nothing", pod(nil, ctr("a", nil, nil)), "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, lim := PodRequests(tt.pod), PodLimits(tt.pod)
			check(t, "requests cpu", req, corev1.ResourceCPU, tt.reqCPU)
			check(t, "requests memory", req, corev1.ResourceMemory, tt.reqMem)
			check(t, "limits cpu", lim, corev1.ResourceCPU, tt.limCPU)
			check(t, "limits memory", lim, corev1.ResourceMemory, tt.limMem)
		})
	}
}

func check(t *testing.T, what string, l corev1.ResourceList, name corev1.ResourceName, want string) {
	t.Helper()
	got, ok := l[name]
	if want == "" {
		if ok {
			t.Errorf("%s = %s, want absent", what, got.String())
		}
		return
	}
	if w := resource.MustParse(want); !ok || got.Cmp(w) != 0 {
		t.Errorf("%s = %s (present %v), want %s", what, got.String(), ok, want)
	}
}

func TestPodRequestsDoesNotAliasSpec(t *testing.T) {
	p := pod(nil, ctr("a", rl("100m", ""), nil))
	req := PodRequests(p)
	q := req[corev1.ResourceCPU]
	q.Add(resource.MustParse("1"))
	req[corev1.ResourceCPU] = q
	if got := p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; got.String() != "100m" {
		t.Fatalf("spec mutated: %s", got.String())
	}
	if MilliCPU(PodRequests(p)) != 100 || MemoryBytes(PodRequests(p)) != 0 {
		t.Fatal("MilliCPU/MemoryBytes")
	}
}
