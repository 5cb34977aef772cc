package registry

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var podColumns = []metav1.TableColumnDefinition{
	col("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
	col("Status", "string", 0, "The aggregate status of the containers in this pod."),
	col("Restarts", "string", 0, "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
	ageColumn(),
	col("IP", "string", 1, corev1.PodStatus{}.SwaggerDoc()["podIP"]),
	col("Node", "string", 1, corev1.PodSpec{}.SwaggerDoc()["nodeName"]),
	col("Nominated Node", "string", 1, corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]),
	col("Readiness Gates", "string", 1, corev1.PodSpec{}.SwaggerDoc()["readinessGates"]),
}

// nodeUnreachablePodReason is node.NodeUnreachablePodReason upstream.
const nodeUnreachablePodReason = "NodeLost"

// podRow ports printPod (pkg/printers/internalversion/printers.go).
func podRow(pod *corev1.Pod) []interface{} {
	st := computePodStatus(pod)
	restarts := strconv.Itoa(st.restarts)
	if st.restarts != 0 && !st.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", st.restarts, translateTimestampSince(st.lastRestart))
	}
	ip := ""
	if len(pod.Status.PodIPs) > 0 {
		ip = pod.Status.PodIPs[0].IP
	}
	gates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		n := 0
		for _, g := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == g.ConditionType {
					if c.Status == corev1.ConditionTrue {
						n++
					}
					break
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", n, len(pod.Spec.ReadinessGates))
	}
	return []interface{}{
		fmt.Sprintf("%d/%d", st.ready, st.total), st.reason, restarts, age(pod),
		orNone(ip), orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), gates,
	}
}

type podPrintStatus struct {
	ready, total, restarts int
	reason                 string
	lastRestart            metav1.Time
}

func isRestartableInit(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func computePodStatus(pod *corev1.Pod) podPrintStatus {
	st := podPrintStatus{total: len(pod.Spec.Containers), reason: string(pod.Status.Phase)}
	if pod.Status.Reason != "" {
		st.reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			st.reason = corev1.PodReasonSchedulingGated
		}
	}
	inits := map[string]*corev1.Container{}
	for i := range pod.Spec.InitContainers {
		inits[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isRestartableInit(&pod.Spec.InitContainers[i]) {
			st.total++
		}
	}
	initializing, sidecarRestarts, sidecarLast := initStatus(pod, inits, &st)
	if !initializing || podConditionTrue(pod.Status.Conditions, corev1.PodInitialized) {
		st.restarts, st.lastRestart = sidecarRestarts, sidecarLast
		containerStatus(pod, &st)
	}
	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		st.reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		st.reason = "Terminating"
	}
	return st
}

// initStatus walks the init container statuses; it returns whether the pod
// is still initializing and the restarts of restartable (sidecar) init containers.
func initStatus(pod *corev1.Pod, inits map[string]*corev1.Container, st *podPrintStatus) (bool, int, metav1.Time) {
	sidecarRestarts, sidecarLast := 0, metav1.Time{}
	for i, c := range pod.Status.InitContainerStatuses {
		st.restarts += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && st.lastRestart.Before(&t.FinishedAt) {
			st.lastRestart = t.FinishedAt
		}
		sidecar := isRestartableInit(inits[c.Name])
		if sidecar {
			sidecarRestarts += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && sidecarLast.Before(&t.FinishedAt) {
				sidecarLast = t.FinishedAt
			}
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecar && c.Started != nil && *c.Started:
			if c.Ready {
				st.ready++
			}
			continue
		case c.State.Terminated != nil:
			t := c.State.Terminated
			switch {
			case t.Reason != "":
				st.reason = "Init:" + t.Reason
			case t.Signal != 0:
				st.reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				st.reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			st.reason = "Init:" + c.State.Waiting.Reason
		default:
			st.reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		return true, sidecarRestarts, sidecarLast
	}
	return false, sidecarRestarts, sidecarLast
}

func containerStatus(pod *corev1.Pod, st *podPrintStatus) {
	hasRunning, errorReason := false, ""
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := pod.Status.ContainerStatuses[i]
		st.restarts += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && st.lastRestart.Before(&t.FinishedAt) {
			st.lastRestart = t.FinishedAt
		}
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			st.reason = c.State.Waiting.Reason
		case c.State.Terminated != nil:
			t := c.State.Terminated
			switch {
			case t.Reason != "":
				st.reason = t.Reason
			case t.Signal != 0:
				st.reason = fmt.Sprintf("Signal:%d", t.Signal)
			default:
				st.reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
			}
			if t.ExitCode != 0 {
				errorReason = st.reason
			}
		case c.Ready && c.State.Running != nil:
			hasRunning = true
			st.ready++
		}
	}
	if st.reason == "Completed" {
		switch {
		case hasRunning && podConditionTrue(pod.Status.Conditions, corev1.PodReady):
			st.reason = "Running"
		case errorReason != "":
			st.reason = errorReason
		case hasRunning:
			st.reason = "NotReady"
		}
	}
}

func podConditionTrue(conds []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
