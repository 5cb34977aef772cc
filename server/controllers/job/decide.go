package job

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Reasons and messages of the Job's conditions, as upstream.
const (
	msgBackoffLimit   = "Job has reached the specified backoff limit"
	msgDeadline       = "Job was active longer than specified deadline"
	msgMaxFailedIdx   = "Job has exceeded the specified maximal number of failed indexes"
	msgFailedIndexes  = "Job has failed indexes"
	msgCompletions    = "Reached expected number of succeeded pods"
	reasonCompletions = batchv1.JobReasonCompletionsReached
)

// decide evaluates how the Job ends, in upstream's order, and leaves it in
// s.finished (nil: not yet):
//  1. an earlier sync's SuccessCriteriaMet or FailureTarget stands (the
//     latter becomes Failed); else a failed pod matching a FailJob rule;
//  2. backoffLimit (container restarts too, for OnFailure) and
//     activeDeadlineSeconds;
//  3. for Indexed Jobs: maxFailedIndexes, then every index done with some
//     failed, then spec.successPolicy.
//
// Reaching spec.completions is decided after the pods are managed.
func (s *jobState) decide() {
	j := s.job
	if c := condition(j, batchv1.JobSuccessCriteriaMet); c != nil && c.Status == corev1.ConditionTrue {
		s.finished = c.DeepCopy()
	} else if c := condition(j, batchv1.JobFailureTarget); c != nil && c.Status == corev1.ConditionTrue {
		s.finished = newCondition(batchv1.JobFailed, c.Reason, c.Message, s.now)
	} else if msg := failJobMessage(j, s.pods); msg != "" {
		s.finished = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonPodFailurePolicy, msg, s.now)
	}
	if s.finished == nil {
		switch {
		case s.failed > *j.Spec.BackoffLimit || pastBackoffLimitOnFailure(j, s.pods):
			s.finished = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, msgBackoffLimit, s.now)
		case s.deadlineLeft() < 0:
			s.finished = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, msgDeadline, s.now)
		case s.deadlineLeft() > 0:
			s.requeueAfter(s.deadlineLeft())
		}
	}
	if isIndexed(j) {
		s.decideIndexed()
	}
}

// decideIndexed counts the indexes and applies the per-index limits and
// the success policy.
func (s *jobState) decideIndexed() {
	j := s.job
	completions := *j.Spec.Completions
	s.prevSucceededIdx = parseIndexes(j.Status.CompletedIndexes, int(completions))
	s.succeededIdx = s.prevSucceededIdx.Clone()
	for _, p := range s.pods {
		if ix := podIndex(p, completions); ix >= 0 && p.Status.Phase == corev1.PodSucceeded && hasFinalizer(p) {
			s.succeededIdx.Insert(ix)
		}
	}
	s.succeeded = int32(s.succeededIdx.Len())
	if hasBackoffLimitPerIndex(j) {
		s.failedIdx = failedIndexes(j, s.pods)
		failed := s.failedIdx.Len()
		if s.finished == nil {
			if j.Spec.MaxFailedIndexes != nil && failed > int(*j.Spec.MaxFailedIndexes) {
				s.finished = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonMaxFailedIndexesExceeded, msgMaxFailedIdx, s.now)
			} else if failed > 0 && failed+s.succeededIdx.Len() >= int(completions) {
				s.finished = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonFailedIndexes, msgFailedIndexes, s.now)
			}
		}
		s.delayed = delayedPods(s)
	}
	if s.finished == nil {
		if msg, ok := matchSuccessPolicy(j.Spec.SuccessPolicy, completions, s.succeededIdx); ok {
			s.finished = newCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, msg, s.now)
		}
	}
}

// complete tells whether spec.completions (or, without it, any success)
// was reached with no pod left running.
func (s *jobState) complete() bool {
	if len(s.active) > 0 {
		return false
	}
	if s.job.Spec.Completions == nil {
		return s.succeeded > 0
	}
	return s.succeeded >= *s.job.Spec.Completions
}

// pastBackoffLimitOnFailure: for restartPolicy OnFailure, the container
// restarts of running and pending pods reach backoffLimit.
func pastBackoffLimitOnFailure(j *batchv1.Job, pods []*corev1.Pod) bool {
	if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			continue
		}
		for _, cs := range p.Status.InitContainerStatuses {
			restarts += cs.RestartCount
		}
		for _, cs := range p.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
	}
	if limit := *j.Spec.BackoffLimit; limit > 0 {
		return restarts >= limit
	}
	return restarts > 0
}

// deadlineLeft is the time until activeDeadlineSeconds passes: 0 without a
// deadline (or while suspended), negative once it passed.
func (s *jobState) deadlineLeft() time.Duration {
	j := s.job
	if j.Spec.ActiveDeadlineSeconds == nil || j.Status.StartTime == nil || ptr.Deref(j.Spec.Suspend, false) {
		return 0
	}
	left := j.Status.StartTime.Add(time.Duration(*j.Spec.ActiveDeadlineSeconds) * time.Second).Sub(s.now)
	if left <= 0 {
		return -1
	}
	return left
}

func newCondition(t batchv1.JobConditionType, reason, msg string, now time.Time) *batchv1.JobCondition {
	ts := metav1.NewTime(now)
	return &batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg,
		LastProbeTime: ts, LastTransitionTime: ts}
}
