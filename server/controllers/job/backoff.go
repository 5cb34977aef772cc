package job

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Back-off between pod re-creates after failures (upstream's
// DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff).
const (
	backoffBase = 10 * time.Second
	backoffMax  = 6 * time.Minute
)

// backoffRecord counts a Job's pod failures since its last success.
type backoffRecord struct {
	failures int32
	last     time.Time // finish time of the last failure
}

// nextBackoff folds the pods that finished since the last sync into r, as
// upstream's newBackoffRecord: a success resets the count, failures after
// the last success add to it.
func nextBackoff(r backoffRecord, succeeded, failed []*corev1.Pod) backoffRecord {
	failed = sortedByFinish(failed)
	if len(succeeded) == 0 {
		if len(failed) > 0 {
			r.failures += int32(len(failed))
			r.last = finishedTime(failed[len(failed)-1])
		}
		return r
	}
	lastSuccess := finishedTime(sortedByFinish(succeeded)[len(succeeded)-1])
	r = backoffRecord{}
	for i := len(failed) - 1; i >= 0; i-- {
		t := finishedTime(failed[i])
		if !t.After(lastSuccess) {
			break
		}
		if r.failures == 0 {
			r.last = t
		}
		r.failures++
	}
	return r
}

func sortedByFinish(pods []*corev1.Pod) []*corev1.Pod {
	out := slices.Clone(pods)
	slices.SortStableFunc(out, func(a, b *corev1.Pod) int { return finishedTime(a).Compare(finishedTime(b)) })
	return out
}

// finishedTime estimates when a pod finished (upstream's getFinishedTime):
// the last container exit, else when Ready turned False, else its deletion
// less the grace period, else its creation.
func finishedTime(p *corev1.Pod) time.Time {
	if t, ok := containersFinished(p); ok {
		return t
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Add(-time.Duration(ptr.Deref(p.DeletionGracePeriodSeconds, 0)) * time.Second)
	}
	return p.CreationTimestamp.Time
}

// containersFinished is the latest exit of the app containers and sidecars,
// when all of them have exited.
func containersFinished(p *corev1.Pod) (time.Time, bool) {
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		sidecars[c.Name] = ptr.Deref(c.RestartPolicy, "") == corev1.ContainerRestartPolicyAlways
	}
	var latest time.Time
	seen := false
	for _, cs := range slices.Concat(p.Status.ContainerStatuses, p.Status.InitContainerStatuses) {
		if _, init := sidecars[cs.Name]; init && !sidecars[cs.Name] {
			continue // a regular init container
		}
		t := cs.State.Terminated
		if t == nil || t.FinishedAt.IsZero() {
			return time.Time{}, false
		}
		seen = true
		if t.FinishedAt.After(latest) {
			latest = t.FinishedAt.Time
		}
	}
	return latest, seen
}

// backoffLeft is how long re-creates must still wait after failures
// failures, the last at last: base doubled per further failure, capped at max.
func backoffLeft(failures int32, last, now time.Time, base, max time.Duration) time.Duration {
	if failures == 0 {
		return 0
	}
	d := base
	for i := int32(1); i < failures && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	if left := d - now.Sub(last); left > 0 {
		return left
	}
	return 0
}
