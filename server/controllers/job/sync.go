package job

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

var labelsAll = labels.Everything()

// jobState is what one sync of a Job works on.
type jobState struct {
	job      *batchv1.Job
	key      string
	pods     []*corev1.Pod // pods the Job controls
	active   []*corev1.Pod // neither finished nor terminating
	now      time.Time
	requeue  time.Duration // 0 = none
	deleting int           // pods this sync deleted (terminating from now on)
	restarts int32         // container restarts of active pods (restartPolicy OnFailure)
}

// terminating counts the pods being deleted.
func (s *jobState) terminating() int { return terminatingCount(s.pods) + s.deleting }

func (s *jobState) requeueAfter(d time.Duration) {
	if d > 0 && (s.requeue == 0 || d < s.requeue) {
		s.requeue = d
	}
}

// syncJob reconciles one Job: count finished pods, decide success or
// failure, create or delete pods, write the status.
func (c *Controller) syncJob(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.jobs.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	s := &jobState{job: cached.DeepCopy(), key: key, now: c.now()}
	if s.pods, err = c.controlledPods(s.job); err != nil {
		return err
	}
	if isFinished(s.job) || s.job.DeletionTimestamp != nil {
		return c.removeFinalizers(ctx, donePods(s.pods))
	}
	before := s.job.Status.DeepCopy()
	if err := c.trackFinishedPods(ctx, s); err != nil {
		return err
	}
	s.active = activePods(s.pods)
	if s.job.Spec.Template.Spec.RestartPolicy == corev1.RestartPolicyOnFailure {
		s.restarts = restartCount(s.active)
	}
	manageErr := c.reconcile(ctx, s)
	if err := c.writeStatus(ctx, s, before); err != nil {
		return err
	}
	if s.requeue > 0 {
		c.queue.AddAfter(key, s.requeue)
	}
	return manageErr
}

// reconcile decides the Job's fate and creates or deletes pods.
func (c *Controller) reconcile(ctx context.Context, s *jobState) error {
	j := s.job
	suspended := ptr.Deref(j.Spec.Suspend, false)
	if !suspended && j.Status.StartTime == nil {
		j.Status.StartTime = ptr.To(metav1.NewTime(s.now))
	}
	if reason, msg := c.failure(s); reason != "" {
		setCondition(j, batchv1.JobFailureTarget, reason, msg, s.now)
		err := c.deletePods(ctx, s, s.active)
		if len(s.active) == 0 && s.terminating() == 0 {
			setCondition(j, batchv1.JobFailed, reason, msg, s.now)
			c.recorder.Event(j, corev1.EventTypeWarning, reason, msg)
		}
		return err
	}
	if successCriteriaMet(j, len(s.active)) {
		if j.Spec.Completions != nil {
			setCondition(j, batchv1.JobSuccessCriteriaMet, "CompletionsReached", "Reached expected number of succeeded pods", s.now)
		}
		err := c.deletePods(ctx, s, s.active)
		if len(s.active) == 0 && s.terminating() == 0 {
			setCondition(j, batchv1.JobComplete, "CompletionsReached", "Reached expected number of succeeded pods", s.now)
			j.Status.CompletionTime = ptr.To(metav1.NewTime(s.now))
			c.recorder.Event(j, corev1.EventTypeNormal, "Completed", "Job completed")
		}
		return err
	}
	if suspended {
		if setCondition(j, batchv1.JobSuspended, "JobSuspended", "Job suspended", s.now) {
			c.recorder.Event(j, corev1.EventTypeNormal, "Suspended", "Job suspended")
		}
		return c.deletePods(ctx, s, s.active)
	}
	if hasCondition(j, batchv1.JobSuspended) {
		setConditionStatus(j, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", s.now)
		j.Status.StartTime = ptr.To(metav1.NewTime(s.now))
		c.recorder.Event(j, corev1.EventTypeNormal, "Resumed", "Job resumed")
	}
	if d := c.deadlineLeft(s); d > 0 {
		s.requeueAfter(d)
	}
	return c.managePods(ctx, s)
}

// failure returns why the Job failed, if it did.
func (c *Controller) failure(s *jobState) (string, string) {
	j := s.job
	if cond := condition(j, batchv1.JobFailureTarget); cond != nil && cond.Status == corev1.ConditionTrue {
		return cond.Reason, cond.Message
	}
	if hasCondition(j, batchv1.JobSuccessCriteriaMet) {
		return "", ""
	}
	if j.Status.Failed+s.restarts > ptr.Deref(j.Spec.BackoffLimit, 6) {
		return "BackoffLimitExceeded", "Job has reached the specified backoff limit"
	}
	if j.Spec.ActiveDeadlineSeconds != nil && j.Status.StartTime != nil && !ptr.Deref(j.Spec.Suspend, false) && c.deadlineLeft(s) <= 0 {
		return "DeadlineExceeded", "Job was active longer than specified deadline"
	}
	return "", ""
}

// deadlineLeft is the time until activeDeadlineSeconds passes (0 without one).
func (c *Controller) deadlineLeft(s *jobState) time.Duration {
	j := s.job
	if j.Spec.ActiveDeadlineSeconds == nil || j.Status.StartTime == nil {
		return 0
	}
	end := j.Status.StartTime.Add(time.Duration(*j.Spec.ActiveDeadlineSeconds) * time.Second)
	if d := end.Sub(s.now); d > 0 {
		return d
	}
	return -1
}

// successCriteriaMet: enough pods (or every index) succeeded.
func successCriteriaMet(j *batchv1.Job, active int) bool {
	if hasCondition(j, batchv1.JobSuccessCriteriaMet) {
		return true
	}
	if j.Spec.Completions == nil {
		return j.Status.Succeeded > 0 && active == 0
	}
	if isIndexed(j) {
		return int32(parseIndexes(j.Status.CompletedIndexes, int(*j.Spec.Completions)).Len()) >= *j.Spec.Completions
	}
	return j.Status.Succeeded >= *j.Spec.Completions
}

// writeStatus writes the status when it changed.
func (c *Controller) writeStatus(ctx context.Context, s *jobState, before *batchv1.JobStatus) error {
	j := s.job
	j.Status.Active = int32(len(s.active))
	j.Status.Ready = ptr.To(readyCount(s.active))
	j.Status.Terminating = ptr.To(int32(s.terminating()))
	if apiequality.Semantic.DeepEqual(before, &j.Status) {
		return nil
	}
	out, err := c.client.BatchV1().Jobs(j.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of job %s: %w", s.key, err)
	}
	s.job = out
	return nil
}
