package kubelet

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestSecurityGroups: the pod's supplementalGroups and fsGroup become the
// container's supplemental groups, and supplementalGroupsPolicy Strict is
// passed on.
func TestSecurityGroups(t *testing.T) {
	c := &corev1.Container{Name: "c"}
	pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(1000)),
		SupplementalGroups: []int64{60000}, FSGroup: ptr.To(int64(2000))}}}
	s := security(pod, c)
	if !slices.Equal(s.SupplementalGroups, []int64{60000, 2000}) || s.SupplementalGroupsStrict || *s.RunAsUser != 1000 {
		t.Errorf("merge: %+v", s)
	}
	pod.Spec.SecurityContext.FSGroup = nil
	pod.Spec.SecurityContext.SupplementalGroupsPolicy = ptr.To(corev1.SupplementalGroupsPolicyStrict)
	if s := security(pod, c); !slices.Equal(s.SupplementalGroups, []int64{60000}) || !s.SupplementalGroupsStrict {
		t.Errorf("strict: %+v", s)
	}
	if s := security(&corev1.Pod{}, c); s.SupplementalGroups != nil || s.SupplementalGroupsStrict {
		t.Errorf("none: %+v", s)
	}
}

func TestAdmitSysctls(t *testing.T) {
	pod := func(names ...string) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{}}}
		for _, n := range names {
			p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
		}
		return p
	}
	if r := admitSysctls(pod("kernel.shm_rmid_forced", "net/ipv4/tcp_syncookies")); r != nil {
		t.Errorf("safe sysctls refused: %+v", r)
	}
	if r := admitSysctls(pod("kernel.msgmax")); r == nil || r.Reason != "SysctlForbidden" {
		t.Errorf("unsafe sysctl: %+v", r)
	}
	hostNet := pod("net.ipv4.tcp_syncookies", "kernel.shm_rmid_forced")
	hostNet.Spec.HostNetwork = true
	if got := podSysctls(hostNet); len(got) != 1 || got["kernel.shm_rmid_forced"] != "1" {
		t.Errorf("host-network pod sysctls: %v", got)
	}
}
