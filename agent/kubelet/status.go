package kubelet

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/agent/qos"
	"github.com/orch/orch/agent/runtime"
)

// waiting is a container's waiting reason set by the worker (image pull
// errors, crash-loop back-off, create errors).
type waiting struct {
	Reason, Message string
}

// statusInput is everything computeStatus needs; it touches nothing.
type statusInput struct {
	pod     *corev1.Pod
	views   map[string]*containerView
	waiting map[string]waiting
	images  map[string]ImageInfo
	// messages are the termination messages of exited containers by ID.
	messages map[string]string
	probes   Probes
	podIP    string
	hostIP   string
	netDone  bool // the pod's network (or host network) is ready
	now      time.Time
	// deleted: the pod was deleted and its containers are stopped; it ends
	// Succeeded or Failed, as the kubelet's getPhase for terminal pods.
	deleted bool
	// allocated are the containers' accepted resources by name (nil: the
	// spec's); resize the conditions of a resize not yet done.
	allocated map[string]corev1.ResourceRequirements
	resize    []corev1.PodCondition
}

// withResources adds a regular or init container's allocated resources to
// its status, and what its cgroups have while it runs.
func (in *statusInput) withResources(s corev1.ContainerStatus, c *corev1.Container) corev1.ContainerStatus {
	r, ok := in.allocated[c.Name]
	if !ok {
		r = c.Resources
	}
	s.AllocatedResources = statusResources(r).Requests
	if s.State.Running != nil {
		s.Resources = statusResources(r)
	}
	return s
}

func mtime(t time.Time) metav1.Time {
	if t.IsZero() {
		return metav1.Time{}
	}
	return metav1.NewTime(t.Truncate(time.Second).UTC())
}

func runtimeID(id string) string {
	if id == "" {
		return ""
	}
	return "containerd://" + id
}

func (in *statusInput) terminated(c *runtime.ContainerStatus) *corev1.ContainerStateTerminated {
	reason := "Completed"
	switch {
	case c.OOMKilled:
		reason = "OOMKilled"
	case c.ExitCode != 0:
		reason = "Error"
	}
	return &corev1.ContainerStateTerminated{
		ExitCode: int32(c.ExitCode), Reason: reason, StartedAt: mtime(c.StartedAt),
		FinishedAt: mtime(c.FinishedAt), ContainerID: runtimeID(c.ID), Message: in.messages[c.ID],
	}
}

// containerStatus computes one container's status.
func (in *statusInput) containerStatus(c *corev1.Container, init bool) corev1.ContainerStatus {
	s := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: in.images[c.Name].ID, Started: new(bool)}
	v := in.views[c.Name]
	if v == nil || v.latest == nil {
		w := in.waiting[c.Name]
		if w.Reason == "" {
			w.Reason = "ContainerCreating"
			if init || !in.initDone() { // upstream: init containers not yet created wait in PodInitializing too
				w.Reason = "PodInitializing"
			}
		}
		s.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
		return s
	}
	l := v.latest
	s.RestartCount = int32(l.RestartCount)
	s.ContainerID = runtimeID(l.ID)
	if v.previous != nil && v.previous.State == runtime.StateExited {
		s.LastTerminationState.Terminated = in.terminated(v.previous)
	}
	switch l.State {
	case runtime.StateRunning:
		s.State.Running = &corev1.ContainerStateRunning{StartedAt: mtime(l.StartedAt)}
		*s.Started = in.probes.Started(in.pod.UID, c.Name, l.ID)
		s.Ready = *s.Started && in.probes.Ready(in.pod.UID, c.Name, l.ID)
	case runtime.StateExited:
		if w, ok := in.waiting[c.Name]; ok && shouldRestart(containerPolicy(in.pod, c, init), l.ExitCode) {
			s.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
			s.LastTerminationState = corev1.ContainerState{Terminated: in.terminated(l)}
			return s
		}
		s.State.Terminated = in.terminated(l)
		// upstream's prober manager: a regular init container that succeeded is ready
		s.Ready = init && !qos.IsRestartableInit(c) && l.ExitCode == 0
	default:
		w := in.waiting[c.Name]
		if w.Reason == "" {
			w.Reason = "ContainerCreating"
		}
		s.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
	}
	return s
}

// initDone says whether every regular init container succeeded and every
// native sidecar runs.
func (in *statusInput) initDone() bool {
	for i := range in.pod.Spec.InitContainers {
		c := &in.pod.Spec.InitContainers[i]
		v := in.views[c.Name]
		if qos.IsRestartableInit(c) {
			if !v.running() && !(v != nil && v.latest != nil && v.latest.RestartCount > 0) {
				return false
			}
			continue
		}
		if !v.succeeded() {
			return false
		}
	}
	return true
}

// initFailed says whether a regular init container failed for good.
func (in *statusInput) initFailed() bool {
	if in.pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		return false
	}
	for i := range in.pod.Spec.InitContainers {
		c := &in.pod.Spec.InitContainers[i]
		if v := in.views[c.Name]; !qos.IsRestartableInit(c) && v.exited() && v.latest.ExitCode != 0 {
			return true
		}
	}
	return false
}

// phase follows kubelet's getPhase over the app container statuses.
func (in *statusInput) phase(statuses []corev1.ContainerStatus) corev1.PodPhase {
	if in.initFailed() {
		return corev1.PodFailed
	}
	if !in.initDone() {
		return corev1.PodPending
	}
	var running, waitingN, stopped, succeeded int
	for _, s := range statuses {
		switch {
		case s.State.Running != nil:
			running++
		case s.State.Terminated != nil:
			stopped++
			if s.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case s.LastTerminationState.Terminated != nil:
			stopped++
		default:
			waitingN++
		}
	}
	switch {
	case waitingN > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped == 0:
		return corev1.PodPending
	case in.pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || in.pod.Spec.RestartPolicy == "":
		return corev1.PodRunning
	case stopped == succeeded:
		return corev1.PodSucceeded
	case in.pod.Spec.RestartPolicy == corev1.RestartPolicyNever:
		return corev1.PodFailed
	}
	return corev1.PodRunning
}

// computeStatus returns the pod's new status, keeping what the old one set
// once (startTime, QoS class, condition transition times).
func computeStatus(in *statusInput) corev1.PodStatus {
	pod := in.pod
	st := corev1.PodStatus{QOSClass: qos.Class(pod), StartTime: pod.Status.StartTime}
	if st.StartTime == nil {
		t := mtime(in.now)
		st.StartTime = &t
	}
	if in.hostIP != "" {
		st.HostIP = in.hostIP
		st.HostIPs = []corev1.HostIP{{IP: in.hostIP}}
	}
	if in.podIP != "" {
		st.PodIP = in.podIP
		st.PodIPs = []corev1.PodIP{{IP: in.podIP}}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		st.InitContainerStatuses = append(st.InitContainerStatuses, in.withResources(in.containerStatus(c, true), c))
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		st.ContainerStatuses = append(st.ContainerStatuses, in.withResources(in.containerStatus(c, false), c))
	}
	for _, c := range ephemeralContainers(pod) {
		st.EphemeralContainerStatuses = append(st.EphemeralContainerStatuses, in.containerStatus(c, false))
	}
	st.ObservedGeneration = pod.Generation
	st.Phase = in.phase(st.ContainerStatuses)
	if in.deleted && st.Phase != corev1.PodSucceeded {
		st.Phase = corev1.PodFailed
	}
	if old := pod.Status.Phase; old == corev1.PodFailed || old == corev1.PodSucceeded {
		st.Phase, st.Reason, st.Message = old, pod.Status.Reason, pod.Status.Message
	}
	st.Conditions = append(foreignConditions(pod.Status.Conditions), in.conditions(&st)...)
	return st
}

// kubeletConditions are the condition types the agent computes
// (kubetypes.PodConditionsByKubelet).
var kubeletConditions = map[corev1.PodConditionType]bool{
	corev1.PodScheduled: true, corev1.PodReady: true, corev1.PodInitialized: true, corev1.ContainersReady: true,
	corev1.PodReadyToStartContainers: true, corev1.PodResizePending: true, corev1.PodResizeInProgress: true,
}

// foreignConditions are the conditions other writers own (DisruptionTarget
// of an eviction or preemption, readiness gates); the agent keeps them as
// the status manager's mergePodStatus does.
func foreignConditions(old []corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range old {
		if !kubeletConditions[c.Type] {
			out = append(out, c)
		}
	}
	return out
}

func (in *statusInput) conditions(st *corev1.PodStatus) []corev1.PodCondition {
	var notReady []string
	for _, s := range append(append([]corev1.ContainerStatus(nil), sidecarStatuses(in.pod, st)...), st.ContainerStatuses...) {
		if !s.Ready {
			notReady = append(notReady, s.Name)
		}
	}
	var notInit []string
	for i, s := range st.InitContainerStatuses {
		c := &in.pod.Spec.InitContainers[i]
		if (qos.IsRestartableInit(c) && !s.Ready && s.State.Running == nil) || (!qos.IsRestartableInit(c) && (s.State.Terminated == nil || s.State.Terminated.ExitCode != 0)) {
			notInit = append(notInit, s.Name)
		}
	}
	initDone := in.initDone()
	conds := []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, in.netDone, "", ""),
		cond(corev1.PodInitialized, initDone, "ContainersNotInitialized", listMsg("containers with incomplete status", notInit)),
		cond(corev1.PodReady, len(notReady) == 0, "ContainersNotReady", listMsg("containers with unready status", notReady)),
		cond(corev1.ContainersReady, len(notReady) == 0, "ContainersNotReady", listMsg("containers with unready status", notReady)),
		cond(corev1.PodScheduled, true, "", ""),
	}
	if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		for i := range conds {
			if conds[i].Type == corev1.PodReady || conds[i].Type == corev1.ContainersReady {
				conds[i] = corev1.PodCondition{Type: conds[i].Type, Status: corev1.ConditionFalse, Reason: "PodCompleted"}
			}
		}
		if initDone {
			conds[1].Reason = "PodCompleted"
		}
	}
	conds = append(conds, in.resize...)
	now := mtime(in.now)
	for i := range conds {
		conds[i].ObservedGeneration = in.pod.Generation
		conds[i].LastTransitionTime = now
		for _, o := range in.pod.Status.Conditions {
			if o.Type == conds[i].Type && o.Status == conds[i].Status {
				conds[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	return conds
}

func sidecarStatuses(pod *corev1.Pod, st *corev1.PodStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for i, s := range st.InitContainerStatuses {
		if qos.IsRestartableInit(&pod.Spec.InitContainers[i]) {
			out = append(out, s)
		}
	}
	return out
}

func cond(t corev1.PodConditionType, ok bool, reason, msg string) corev1.PodCondition {
	if ok {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue}
	}
	return corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: msg}
}

func listMsg(prefix string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return fmt.Sprintf("%s: [%s]", prefix, strings.Join(names, " "))
}

// crashLoopMessage is kubelet's CrashLoopBackOff message.
func crashLoopMessage(d time.Duration, container string, pod *corev1.Pod) string {
	return fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", d, container, pod.Name, pod.Namespace, pod.UID)
}

var _ = types.UID("")
