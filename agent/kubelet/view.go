package kubelet

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/runtime"
)

// containerView is what the runtime holds of one container of a pod: its
// latest instance (highest restart count) and the one before (lastState).
type containerView struct {
	latest   *runtime.ContainerStatus
	previous *runtime.ContainerStatus
	all      []runtime.ContainerStatus
}

// groupContainers groups a pod's runtime containers by container name.
func groupContainers(list []runtime.ContainerStatus) map[string]*containerView {
	out := map[string]*containerView{}
	for i := range list {
		c := list[i]
		v := out[c.Name]
		if v == nil {
			v = &containerView{}
			out[c.Name] = v
		}
		v.all = append(v.all, c)
		switch {
		case v.latest == nil || c.RestartCount > v.latest.RestartCount:
			if v.latest != nil && (v.previous == nil || v.latest.RestartCount > v.previous.RestartCount) {
				v.previous = v.latest
			}
			v.latest = &v.all[len(v.all)-1]
		case v.previous == nil || c.RestartCount > v.previous.RestartCount:
			v.previous = &v.all[len(v.all)-1]
		}
	}
	return out
}

func (v *containerView) running() bool {
	return v != nil && v.latest != nil && v.latest.State == runtime.StateRunning
}

func (v *containerView) exited() bool {
	return v != nil && v.latest != nil && v.latest.State == runtime.StateExited
}

func (v *containerView) succeeded() bool {
	return v.exited() && v.latest.ExitCode == 0
}

// Back-off of crashing containers, as kubelet: 10 s doubling to 5 min; a
// container that ran 10 minutes starts afresh.
const (
	backoffInitial = 10 * time.Second
	backoffMax     = 5 * time.Minute
	backoffReset   = 10 * time.Minute
)

// crashBackoff is how long after its exit a container that was restarted
// restarts times and ran for ran waits before the next start. The first
// restart is immediate, as kubelet's.
func crashBackoff(restarts int, ran time.Duration) time.Duration {
	if restarts == 0 || ran >= backoffReset {
		return 0
	}
	d := backoffInitial
	for i := 1; i < restarts && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// shouldRestart says whether an exited container with exit code restarts
// under the policy.
func shouldRestart(policy corev1.RestartPolicy, exitCode int) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// action is what the worker does with one container.
type action int

const (
	actNone  action = iota // running, or exited for good
	actStart               // create (if needed) and start instance restartCount
	actWait                // in back-off until wait has passed
)

// decision is decide's answer.
type decision struct {
	act          action
	restartCount int
	wait         time.Duration
}

// decide picks the action for one container from its runtime view.
func decide(policy corev1.RestartPolicy, v *containerView, now time.Time) decision {
	switch {
	case v == nil || v.latest == nil:
		return decision{act: actStart}
	case v.latest.State == runtime.StateCreated:
		return decision{act: actStart, restartCount: v.latest.RestartCount}
	case v.latest.State != runtime.StateExited:
		return decision{act: actNone}
	case !shouldRestart(policy, v.latest.ExitCode):
		return decision{act: actNone}
	}
	l := v.latest
	delay := crashBackoff(l.RestartCount, l.FinishedAt.Sub(l.StartedAt))
	if until := l.FinishedAt.Add(delay); now.Before(until) {
		return decision{act: actWait, restartCount: l.RestartCount, wait: until.Sub(now)}
	}
	return decision{act: actStart, restartCount: l.RestartCount + 1}
}

// containerPolicy is the restart policy of a container: native sidecars
// always restart, other init containers restart unless the pod's policy is
// Never (then OnFailure semantics are moot: a failure fails the pod).
func containerPolicy(pod *corev1.Pod, c *corev1.Container, init bool) corev1.RestartPolicy {
	if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
		return corev1.RestartPolicyAlways
	}
	if init {
		if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
			return corev1.RestartPolicyNever
		}
		return corev1.RestartPolicyOnFailure
	}
	if pod.Spec.RestartPolicy == "" {
		return corev1.RestartPolicyAlways
	}
	return pod.Spec.RestartPolicy
}
