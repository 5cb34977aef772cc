package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// cgroupFile reads a cgroup file of the container as it sees it (v2 name
// first, then the v1 one), as the upstream resize e2e tests do.
func cgroupFile(t *testing.T, k *kubectlRunner, pod, container, v2, v1 string) string {
	t.Helper()
	out, err := k.run("", "exec", pod, "-c", container, "--", "sh", "-c", "cat /sys/fs/cgroup/"+v2+" 2>/dev/null || cat /sys/fs/cgroup/"+v1)
	if err != nil {
		diag, _ := k.run("", "exec", pod, "-c", container, "--", "sh", "-c", "ls -la /sys/fs/cgroup; grep cgroup /proc/self/mountinfo")
		t.Fatalf("reading %s: %v\n%s\n%s", v1, err, out, diag)
	}
	return strings.TrimSpace(out)
}

// resizeInPlace: pods/resize raises a running container's cpu request and
// adds a cpu limit; the agent writes them into the container's cgroup
// without a restart and reports them in the status.
func resizeInPlace(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	k := newKubectl(t, e)
	c := bbContainer("app", "sleep 3600")
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("35Mi")}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "resize"}, Spec: corev1.PodSpec{NodeName: e.node, Containers: []corev1.Container{c}}})
	defer func() { _ = cs.CoreV1().Pods("default").Delete(context.Background(), "resize", metav1.DeleteOptions{}) }()
	waitPod(t, cs, "resize", "Ready", podReady)
	if q := cgroupFile(t, k, "resize", "app", "cpu.max", "cpu/cpu.cfs_quota_us"); !strings.HasPrefix(q, "max") && q != "-1" {
		t.Fatalf("cpu quota before the resize: %q", q)
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"25m"},"limits":{"cpu":"35m"}}}]}}`
	p, err := cs.CoreV1().Pods("default").Patch(context.Background(), "resize", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
	if err != nil {
		t.Fatalf("resize: %v", err)
	}
	if p.Generation != 2 {
		t.Fatalf("generation after resize: %d", p.Generation)
	}
	p = waitPod(t, cs, "resize", "resized", func(p *corev1.Pod) bool {
		s := p.Status.ContainerStatuses
		return p.Status.ObservedGeneration == 2 && len(s) == 1 && s[0].Resources != nil && s[0].Resources.Limits.Cpu().Equal(resource.MustParse("35m"))
	})
	if s := p.Status.ContainerStatuses[0]; s.RestartCount != 0 || !s.AllocatedResources.Cpu().Equal(resource.MustParse("25m")) {
		t.Fatalf("status after resize: %+v", s)
	}
	if q := cgroupFile(t, k, "resize", "app", "cpu.max", "cpu/cpu.cfs_quota_us"); !strings.HasPrefix(q, "3500") {
		t.Fatalf("cpu quota after the resize: %q, want 3500", q)
	}
}

// ephemeralContainer: kubectl debug adds a container that runs in the pod
// beside its target's processes; exec and logs reach it.
func ephemeralContainer(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	k := newKubectl(t, e)
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "debugme"}, Spec: corev1.PodSpec{NodeName: e.node,
		Containers: []corev1.Container{bbContainer("app", "exec sleep 3601")}}})
	defer func() {
		_ = cs.CoreV1().Pods("default").Delete(context.Background(), "debugme", metav1.DeleteOptions{})
	}()
	waitPod(t, cs, "debugme", "Ready", podReady)
	k.must("", "debug", "debugme", "--image=busybox:1.36", "-c", "dbg", "--target=app", "--", "sh", "-c", "echo polo; exec sleep 3602")
	p := waitPod(t, cs, "debugme", "with a running ephemeral container", func(p *corev1.Pod) bool {
		s := p.Status.EphemeralContainerStatuses
		return len(s) == 1 && s[0].State.Running != nil
	})
	if p.Generation != 2 || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("pod with ephemeral container: generation %d phase %s", p.Generation, p.Status.Phase)
	}
	if out := k.must("", "exec", "debugme", "-c", "dbg", "--", "ps"); !strings.Contains(out, "sleep 3601") {
		t.Fatalf("the ephemeral container does not see its target's processes:\n%s", out)
	}
	waitFor(t, 30*time.Second, "the ephemeral container's log", func() (bool, error) {
		out, err := k.run("", "logs", "debugme", "-c", "dbg")
		return strings.Contains(out, "polo"), err
	})
}
