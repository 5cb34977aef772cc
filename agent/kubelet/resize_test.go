package kubelet

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/agent/runtime"
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

// resize changes the API's pod like pods/resize does: new resources, a
// new generation.
func (h *harness) resize(name string, r corev1.ResourceRequirements) {
	h.t.Helper()
	p := h.pod(name)
	p.Spec.Containers[0].Resources = r
	p.Generation++
	if _, err := h.client.CoreV1().Pods("default").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func TestResizeInPlace(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("r", func(p *corev1.Pod) {
		p.Generation = 1
		p.Spec.Containers[0].Resources.Requests = rl("20m", "35Mi")
	}))
	h.sync("r")
	id := runtime.ContainerID("uid-r", "app", 0)
	p := h.pod("r")
	cs := p.Status.ContainerStatuses[0]
	if cs.Resources == nil || cs.Resources.Limits != nil || !cs.Resources.Requests.Cpu().Equal(resource.MustParse("20m")) ||
		!cs.AllocatedResources.Memory().Equal(resource.MustParse("35Mi")) || p.Status.ObservedGeneration != 1 {
		t.Fatalf("status before resize: resources %+v allocated %v observedGeneration %d", cs.Resources, cs.AllocatedResources, p.Status.ObservedGeneration)
	}

	// Raise the cpu request and add a limit: the running container is
	// updated in place, not restarted.
	h.resize("r", corev1.ResourceRequirements{Requests: rl("25m", "35Mi"), Limits: rl("35m", "")})
	calls := len(h.rt.Calls)
	h.sync("r")
	if got := h.rt.Calls[calls:]; len(got) != 1 || got[0] != "update "+id {
		t.Fatalf("runtime calls for a resize: %v", got)
	}
	spec, _ := h.rt.Spec(id)
	if spec.Resources.CPUQuota != 3500 || spec.Resources.CPUShares != 25*1024/1000 {
		t.Fatalf("container resources after resize: %+v", spec.Resources)
	}
	p = h.pod("r")
	cs = p.Status.ContainerStatuses[0]
	if cs.RestartCount != 0 || !cs.Resources.Limits.Cpu().Equal(resource.MustParse("35m")) || !cs.AllocatedResources.Cpu().Equal(resource.MustParse("25m")) ||
		p.Status.ObservedGeneration != 2 || condition(p, corev1.PodResizePending) != "" || condition(p, corev1.PodResizeInProgress) != "" {
		t.Fatalf("status after resize: %+v observedGeneration %d conditions %v", cs, p.Status.ObservedGeneration, p.Status.Conditions)
	}
	for _, c := range p.Status.Conditions {
		if c.ObservedGeneration != 2 {
			t.Fatalf("condition %s observedGeneration %d", c.Type, c.ObservedGeneration)
		}
	}

	// More than the node has: Infeasible, the allocation stays.
	h.resize("r", corev1.ResourceRequirements{Requests: rl("3", "35Mi"), Limits: rl("3", "")})
	calls = len(h.rt.Calls)
	h.sync("r")
	p = h.pod("r")
	if len(h.rt.Calls) != calls || condition(p, corev1.PodResizePending) != corev1.ConditionTrue ||
		!p.Status.ContainerStatuses[0].AllocatedResources.Cpu().Equal(resource.MustParse("25m")) {
		t.Fatalf("infeasible resize: calls %v conditions %v", h.rt.Calls[calls:], p.Status.Conditions)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodResizePending && c.Reason != corev1.PodReasonInfeasible {
			t.Fatalf("pending reason %q: %s", c.Reason, c.Message)
		}
	}
}

func TestResizeRestartContainerPolicy(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("rr", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: rl("100m", "64Mi"), Limits: rl("100m", "64Mi")}
		p.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}}
	}))
	h.sync("rr")
	h.resize("rr", corev1.ResourceRequirements{Requests: rl("100m", "128Mi"), Limits: rl("100m", "128Mi")})
	h.sync("rr") // kills the container
	h.sync("rr") // starts instance 1 with the new limit
	spec, ok := h.rt.Spec(runtime.ContainerID("uid-rr", "app", 1))
	if !ok || spec.Resources.MemoryLimit != 128<<20 {
		t.Fatalf("restarted container: %v %+v (calls %v)", ok, spec.Resources, h.rt.Calls)
	}
}

func TestEphemeralContainer(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("e"))
	h.sync("e")
	p := h.pod("e")
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{TargetContainerName: "app",
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox:1.36", Stdin: true, TTY: true}}}
	if _, err := h.client.CoreV1().Pods("default").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("e")
	id := runtime.ContainerID("uid-e", "debugger", 0)
	spec, ok := h.rt.Spec(id)
	if !ok || !spec.TTY || !spec.Stdin || spec.NetnsPath == "" || spec.PIDNamespacePath != "/proc/1/ns/pid" {
		t.Fatalf("ephemeral container spec: %v %+v", ok, spec)
	}
	p = h.pod("e")
	if len(p.Status.EphemeralContainerStatuses) != 1 || p.Status.EphemeralContainerStatuses[0].State.Running == nil {
		t.Fatalf("ephemeral status: %+v", p.Status.EphemeralContainerStatuses)
	}
	// It runs once: an exit is final and the pod keeps running.
	h.exit("e", "debugger", 0, 1, false)
	calls := len(h.rt.Calls)
	h.sync("e")
	p = h.pod("e")
	if len(h.rt.Calls) != calls || p.Status.EphemeralContainerStatuses[0].State.Terminated == nil || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("after exit: calls %v status %+v phase %s", h.rt.Calls[calls:], p.Status.EphemeralContainerStatuses, p.Status.Phase)
	}
}

// TestImageChangeRestarts: a new spec image (a pod update may change it)
// restarts the running container with that image, even under
// restartPolicy Never, as kubelet does for a changed container definition.
func TestImageChangeRestarts(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("img", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }))
	h.sync("img")
	p := h.pod("img")
	p.Spec.Containers[0].Image = "busybox:1.37"
	if _, err := h.client.CoreV1().Pods("default").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("img") // pulls the new image, kills the old container
	h.sync("img") // starts instance 1
	spec, ok := h.rt.Spec(runtime.ContainerID("uid-img", "app", 1))
	if !ok || spec.Image != "docker.io/library/busybox:1.37" {
		t.Fatalf("restarted container: %v %q (calls %v)", ok, spec.Image, h.rt.Calls)
	}
	h.sync("img")
	p = h.pod("img")
	if s := p.Status.ContainerStatuses[0]; s.State.Running == nil || s.RestartCount != 1 || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("status after the image change: %+v phase %s", s, p.Status.Phase)
	}
}
