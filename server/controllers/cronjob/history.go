package cronjob

import (
	"context"
	"slices"

	"go.uber.org/zap"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// finished tells whether j is Complete or Failed and which.
func finished(j *batchv1.Job) (bool, batchv1.JobConditionType) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c.Type
		}
	}
	return false, ""
}

func jobRef(j *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: j.UID,
		APIVersion: batchv1.SchemeGroupVersion.String(), ResourceVersion: j.ResourceVersion}
}

func inActive(cj *batchv1.CronJob, j *batchv1.Job) bool {
	return slices.ContainsFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == j.UID })
}

func removeActive(cj *batchv1.CronJob, uid types.UID) {
	cj.Status.Active = slices.DeleteFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == uid })
}

// cleanupHistory deletes the oldest finished Jobs beyond the history limits.
func (c *Controller) cleanupHistory(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) {
	var ok, failed []*batchv1.Job
	for _, j := range jobs {
		switch done, typ := finished(j); {
		case !done || j.DeletionTimestamp != nil:
		case typ == batchv1.JobComplete:
			ok = append(ok, j)
		default:
			failed = append(failed, j)
		}
	}
	for _, set := range []struct {
		jobs  []*batchv1.Job
		limit *int32
	}{{ok, cj.Spec.SuccessfulJobsHistoryLimit}, {failed, cj.Spec.FailedJobsHistoryLimit}} {
		if set.limit == nil {
			continue
		}
		for _, j := range oldest(set.jobs, len(set.jobs)-int(ptr.Deref(set.limit, 0))) {
			if err := c.deleteJob(ctx, cj, j.Name, j.UID); err != nil {
				c.log.Warn("deleting old job", zap.String("job", j.Namespace+"/"+j.Name), zap.Error(err))
			}
		}
	}
}

// oldest returns the n Jobs that started first (creation time without a start time).
func oldest(jobs []*batchv1.Job, n int) []*batchv1.Job {
	if n <= 0 {
		return nil
	}
	start := func(j *batchv1.Job) int64 {
		if j.Status.StartTime != nil {
			return j.Status.StartTime.UnixNano()
		}
		return j.CreationTimestamp.UnixNano()
	}
	s := slices.Clone(jobs)
	slices.SortStableFunc(s, func(a, b *batchv1.Job) int {
		if x, y := start(a), start(b); x != y {
			if x < y {
				return -1
			}
			return 1
		}
		return 0
	})
	return s[:min(n, len(s))]
}
