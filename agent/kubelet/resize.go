package kubelet

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/orch/orch/agent/qos"
	"github.com/orch/orch/agent/runtime"
)

// In-place resize (KEP 1287), as kubelet's allocation manager: a change of
// the containers' resources (pods/resize) is accepted when the pod still
// fits the node beside the other admitted pods, else it stays pending
// (PodResizePending: Infeasible when it exceeds the node's allocatable,
// Deferred when other pods are in the way). Accepted resources are the
// "allocated" ones: the pod cgroup and new containers use them, and running
// containers get them through the runtime without a restart unless their
// resizePolicy says RestartContainer.

// specResources are the resources of the pod's containers by name.
func specResources(pod *corev1.Pod) map[string]corev1.ResourceRequirements {
	out := map[string]corev1.ResourceRequirements{}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			out[cs[i].Name] = *cs[i].Resources.DeepCopy()
		}
	}
	return out
}

// allocate decides a pending resize of pod (or takes the spec's resources
// at admission) and records the outcome in st.
func (k *Kubelet) allocate(pod *corev1.Pod, st *podState) {
	want := specResources(pod)
	if st.allocated == nil || equality.Semantic.DeepEqual(want, st.allocated) {
		st.allocated, st.resize = want, nil
		return
	}
	if cond := resizeFit(withResources(pod, want), k.admittedPods(pod), k.cfg.Allocatable); cond != nil {
		if len(st.resize) == 0 || st.resize[0].Message != cond.Message {
			k.log.Info("pod resize pending", zap.String("pod", st.key), zap.String("reason", cond.Reason), zap.String("message", cond.Message))
		}
		st.resize = []corev1.PodCondition{*cond}
		return
	}
	st.allocated, st.resize = want, nil
	k.log.Info("pod resize accepted", zap.String("pod", st.key))
}

// resizeFit says why the resized pod cannot have its resources now:
// Infeasible beyond the node's allocatable, Deferred beside the admitted
// pods; nil when it fits.
func resizeFit(pod *corev1.Pod, admitted []*corev1.Pod, allocatable corev1.ResourceList) *corev1.PodCondition {
	if rej := admit(pod, nil, allocatable); rej != nil {
		msg := rej.Message
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if rej.Reason == "Outof"+string(r) {
				q, want := allocatable[r], qos.PodRequests(pod)[r]
				msg = fmt.Sprintf("Node didn't have enough capacity: %s, requested: %d, capacity: %d", r, amount(r, want), amount(r, q))
			}
		}
		return &corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue,
			Reason: corev1.PodReasonInfeasible, Message: msg}
	}
	if rej := admit(pod, admitted, allocatable); rej != nil {
		return &corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue,
			Reason: corev1.PodReasonDeferred, Message: rej.Message}
	}
	return nil
}

// withResources is a copy of pod whose containers have resources res (by
// name): the allocated pod the cgroups and new containers are made from.
func withResources(pod *corev1.Pod, res map[string]corev1.ResourceRequirements) *corev1.Pod {
	out := pod.DeepCopy()
	for _, cs := range [][]corev1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range cs {
			if r, ok := res[cs[i].Name]; ok {
				cs[i].Resources = *r.DeepCopy()
			}
		}
	}
	return out
}

// resizeContainer gives the running container c (of the allocated pod) its
// allocated limits: through the runtime, or, when a changed resource's
// resizePolicy is RestartContainer, by restarting it. It reports whether
// the container keeps running.
func (k *Kubelet) resizeContainer(ctx context.Context, pod *corev1.Pod, st *podState, c *corev1.Container, cs runtime.ContainerStatus) bool {
	want := k.withUnified(containerResources(c))
	have, known := st.applied[cs.ID]
	if !known { // adopted after an agent restart: what the last status said
		have, known = k.reportedLimits(pod, cs.ID)
	}
	if known && sameLimits(have, want) {
		return true
	}
	if known && restartOnResize(c, have, want) {
		delete(st.applied, cs.ID)
		k.killContainer(ctx, pod, c, cs, st.podIP, fmt.Sprintf("Container %s resize requires restart", c.Name))
		return false
	}
	if err := k.cfg.Runtime.UpdateContainerResources(ctx, cs.ID, want); err != nil {
		k.log.Warn("resizing container failed", zap.String("pod", st.key), zap.String("container", c.Name), zap.Error(err))
		st.resize = []corev1.PodCondition{{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue,
			Reason: corev1.PodReasonError, Message: err.Error()}}
		return true
	}
	st.applied[cs.ID] = want
	return true
}

// amount is q in kubelet's units for messages: millicores or bytes.
func amount(r corev1.ResourceName, q resource.Quantity) int64 {
	if r == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// reportedLimits are the limits the pod's status reports for the running
// container id (status.containerStatuses[].resources).
func (k *Kubelet) reportedLimits(pod *corev1.Pod, id string) (runtime.Resources, bool) {
	for _, l := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range l {
			if s.ContainerID == runtimeID(id) && s.Resources != nil {
				return k.withUnified(containerResources(&corev1.Container{Resources: *s.Resources})), true
			}
		}
	}
	return runtime.Resources{}, false
}

func sameLimits(a, b runtime.Resources) bool {
	return a.CPUShares == b.CPUShares && a.CPUQuota == b.CPUQuota && a.CPUPeriod == b.CPUPeriod && a.MemoryLimit == b.MemoryLimit
}

// restartOnResize says whether a changed resource of c has the resize
// policy RestartContainer (the default is NotRequired).
func restartOnResize(c *corev1.Container, have, want runtime.Resources) bool {
	changed := map[corev1.ResourceName]bool{
		corev1.ResourceCPU:    have.CPUShares != want.CPUShares || have.CPUQuota != want.CPUQuota,
		corev1.ResourceMemory: have.MemoryLimit != want.MemoryLimit,
	}
	for _, p := range c.ResizePolicy {
		if changed[p.ResourceName] && p.RestartPolicy == corev1.RestartContainer {
			return true
		}
	}
	return false
}

// statusResources are a container's allocated requests and limits as
// status.containerStatuses[].resources reports them (nil maps when unset).
func statusResources(r corev1.ResourceRequirements) *corev1.ResourceRequirements {
	pick := func(l corev1.ResourceList) corev1.ResourceList {
		var out corev1.ResourceList
		for name, q := range l {
			if out == nil {
				out = corev1.ResourceList{}
			}
			out[name] = q.DeepCopy()
		}
		return out
	}
	return &corev1.ResourceRequirements{Requests: pick(r.Requests), Limits: pick(r.Limits)}
}
