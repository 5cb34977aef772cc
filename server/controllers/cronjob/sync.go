package cronjob

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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// scheduledTimestampAnnotation records a Job's scheduled time (RFC 3339).
const scheduledTimestampAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.cronJobs.CronJobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	cj := cached.DeepCopy()
	jobs, err := c.ownedJobs(cj)
	if err != nil {
		return err
	}
	before := cj.Status.DeepCopy()
	now := c.now()
	if err := c.trackJobs(ctx, cj, jobs); err != nil {
		return err
	}
	wait, err := c.schedule(ctx, cj, now)
	if serr := c.writeStatus(ctx, cj, before); serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	if cj.DeletionTimestamp == nil {
		c.cleanupHistory(ctx, cj, jobs)
	}
	if wait > 0 {
		c.queue.AddAfter(key, wait)
	}
	return nil
}

// ownedJobs lists the Jobs cj controls.
func (c *Controller) ownedJobs(cj *batchv1.CronJob) ([]*batchv1.Job, error) {
	all, err := c.jobs.Jobs(cj.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*batchv1.Job
	for _, j := range all {
		if ref := metav1.GetControllerOf(j); ref != nil && ref.UID == cj.UID {
			out = append(out, j)
		}
	}
	return out, nil
}

// trackJobs brings status.active up to date and notes finished Jobs.
func (c *Controller) trackJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) error {
	byUID := map[string]*batchv1.Job{}
	for _, j := range jobs {
		byUID[string(j.UID)] = j
		done, typ := finished(j)
		switch {
		case !done && !inActive(cj, j):
			cj.Status.Active = append(cj.Status.Active, jobRef(j))
		case done && inActive(cj, j):
			c.recorder.Eventf(cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, typ)
			removeActive(cj, j.UID)
		}
		if done && typ == batchv1.JobComplete && j.Status.CompletionTime != nil &&
			(cj.Status.LastSuccessfulTime == nil || cj.Status.LastSuccessfulTime.Before(j.Status.CompletionTime)) {
			cj.Status.LastSuccessfulTime = j.Status.CompletionTime.DeepCopy()
		}
	}
	for _, ref := range append([]corev1.ObjectReference(nil), cj.Status.Active...) {
		if byUID[string(ref.UID)] != nil {
			continue
		}
		// Not in the cache: confirm with the API before forgetting it.
		j, err := c.client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || (err == nil && j.UID != ref.UID):
			removeActive(cj, ref.UID)
		case err != nil:
			return fmt.Errorf("get job %s/%s: %w", ref.Namespace, ref.Name, err)
		}
	}
	return nil
}

// schedule starts the Job of the most recent missed schedule time, if
// allowed, and returns how long until the next one.
func (c *Controller) schedule(ctx context.Context, cj *batchv1.CronJob, now time.Time) (time.Duration, error) {
	if cj.DeletionTimestamp != nil {
		return 0, nil
	}
	sched, err := parseSchedule(cj)
	if err != nil {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return 0, nil
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		return 0, nil
	}
	wait := nextWait(sched, now)
	scheduled, missed, err := mostRecentScheduleTime(earliestTime(cj, now), now, sched)
	if err != nil {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return 0, nil
	}
	if missed > tooManyMissed {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "TooManyMissedTimes",
			"too many missed start times: %d. Set or decrease .spec.startingDeadlineSeconds or check clock skew", missed)
	}
	if scheduled == nil || (cj.Status.LastScheduleTime != nil && !scheduled.After(cj.Status.LastScheduleTime.Time)) {
		return wait, nil
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return wait, nil
	}
	name := jobName(cj, *scheduled)
	for _, a := range cj.Status.Active {
		if a.Name == name {
			return wait, nil
		}
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		c.recorder.Eventf(cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return wait, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		for _, a := range append([]corev1.ObjectReference(nil), cj.Status.Active...) {
			if err := c.deleteJob(ctx, cj, a.Name, a.UID); err != nil {
				return 0, err
			}
			removeActive(cj, a.UID)
		}
	}
	return wait, c.createJob(ctx, cj, *scheduled)
}

// createJob creates the Job of scheduled time and records it.
func (c *Controller) createJob(ctx context.Context, cj *batchv1.CronJob, scheduled time.Time) error {
	j := jobFromTemplate(cj, scheduled)
	out, err := c.client.BatchV1().Jobs(cj.Namespace).Create(ctx, j, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		out, err = c.client.BatchV1().Jobs(cj.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
		if err == nil {
			if ref := metav1.GetControllerOf(out); ref == nil || ref.UID != cj.UID {
				return fmt.Errorf("job %s/%s exists and is not controlled by cronjob %s", cj.Namespace, j.Name, cj.Name)
			}
		}
	} else if err == nil {
		c.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job %v", out.Name)
	}
	if err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		}
		return fmt.Errorf("create job for cronjob %s/%s: %w", cj.Namespace, cj.Name, err)
	}
	if done, _ := finished(out); !done && !inActive(cj, out) {
		cj.Status.Active = append(cj.Status.Active, jobRef(out))
	}
	cj.Status.LastScheduleTime = &metav1.Time{Time: scheduled}
	return nil
}

// jobFromTemplate builds the Job of one schedule time, as upstream.
func jobFromTemplate(cj *batchv1.CronJob, scheduled time.Time) *batchv1.Job {
	tpl := cj.Spec.JobTemplate.DeepCopy()
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Name: jobName(cj, scheduled), Namespace: cj.Namespace, Labels: tpl.Labels, Annotations: tpl.Annotations,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))},
	}, Spec: tpl.Spec}
	if j.Annotations == nil {
		j.Annotations = map[string]string{}
	}
	loc := time.Local
	if tz := cj.Spec.TimeZone; tz != nil {
		if l, err := time.LoadLocation(*tz); err == nil {
			loc = l
		}
	}
	j.Annotations[scheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	return j
}

// deleteJob deletes one Job with background propagation.
func (c *Controller) deleteJob(ctx context.Context, cj *batchv1.CronJob, name string, uid types.UID) error {
	p := metav1.DeletePropagationBackground
	err := c.client.BatchV1().Jobs(cj.Namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &p,
		Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		return fmt.Errorf("delete job %s/%s: %w", cj.Namespace, name, err)
	}
	c.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", name)
	return nil
}

func (c *Controller) writeStatus(ctx context.Context, cj *batchv1.CronJob, before *batchv1.CronJobStatus) error {
	if apiequality.Semantic.DeepEqual(before, &cj.Status) {
		return nil
	}
	if _, err := c.client.BatchV1().CronJobs(cj.Namespace).UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of cronjob %s/%s: %w", cj.Namespace, cj.Name, err)
	}
	return nil
}
