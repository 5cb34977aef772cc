package job

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// maxUncounted bounds status.uncountedTerminatedPods (upstream's
// MaxUncountedPods), so the status stays small and one sync does not remove
// finalizers forever.
const maxUncounted = 500

// trackStatus counts finished pods in upstream's three steps (record their
// uids in status.uncountedTerminatedPods and any interim
// FailureTarget/SuccessCriteriaMet condition, remove their finalizers, move
// them to succeeded/failed) and then, once no pod is uncounted or
// terminating, sets Complete or Failed (trackJobStatusAndRemoveFinalizers).
func (c *Controller) trackStatus(ctx context.Context, s *jobState, flush bool) error {
	j := s.job
	withFinalizer := sets.New[types.UID]()
	for _, p := range s.pods {
		if hasFinalizer(p) && !s.expectedRm.Has(p.UID) {
			withFinalizer.Insert(p.UID)
		}
	}
	if moveCounted(&j.Status, withFinalizer) {
		flush = true
	}
	toRemove, newIdx, full, found := s.collectFinished()
	flush = flush || found
	if isIndexed(j) && s.indexStatus(newIdx) {
		flush = true
	}
	if s.recordInterim() {
		flush = true
	}
	flush, err := c.flushAndRemove(ctx, s, toRemove, withFinalizer, flush)
	if err != nil {
		return err
	}
	finished := !full && s.enactFinished()
	if !flush && !finished {
		return nil
	}
	if err := c.updateStatus(ctx, s); err != nil {
		return err
	}
	if finished {
		c.recordFinished(s.job, s.finished)
	}
	return nil
}

// collectFinished picks the pods whose finalizer goes in this sync and adds
// the finished ones to uncountedTerminatedPods (Indexed: succeeded ones as
// new indexes). full: the uncounted list reached its bound.
func (s *jobState) collectFinished() (toRemove []*corev1.Pod, newIdx []int, full, changed bool) {
	j := s.job
	u := j.Status.UncountedTerminatedPods
	pods := s.pods
	if isIndexed(j) {
		pods = slices.Clone(pods)
		slices.SortStableFunc(pods, func(a, b *corev1.Pod) int { return podIndex(a, 1<<31-1) - podIndex(b, 1<<31-1) })
	}
	failing := s.finished != nil && s.finished.Type != batchv1.JobSuccessCriteriaMet
	for _, p := range pods {
		if !hasFinalizer(p) || s.expectedRm.Has(p.UID) {
			continue
		}
		failed := isPodFailed(p, j)
		if !s.canRemoveFinalizer(p, failed) {
			continue
		}
		toRemove = append(toRemove, p)
		ix := -1
		if isIndexed(j) {
			ix = podIndex(p, *j.Spec.Completions)
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !s.uncountedFailed.Has(p.UID):
			if isIndexed(j) && ix >= 0 && !s.prevSucceededIdx.Has(ix) {
				newIdx, changed = append(newIdx, ix), true
			} else if !isIndexed(j) && !s.uncountedSucceeded.Has(p.UID) {
				u.Succeeded, changed = append(u.Succeeded, p.UID), true
			}
		case failed || failing: // a Job that fails fails its unfinished pods
			if !s.uncountedFailed.Has(p.UID) && (!isIndexed(j) || ix >= 0) && failureCounts(j, p) {
				u.Failed, changed = append(u.Failed, p.UID), true
			}
		}
		if len(newIdx)+len(u.Succeeded)+len(u.Failed) >= maxUncounted {
			return toRemove, newIdx, true, changed
		}
	}
	return toRemove, newIdx, false, changed
}

// canRemoveFinalizer: the Job is being deleted or ends, the pod succeeded,
// or it failed and is not the pod its index's replacement waits for.
func (s *jobState) canRemoveFinalizer(p *corev1.Pod, failed bool) bool {
	if s.job.DeletionTimestamp != nil || s.finished != nil || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if !failed {
		return false
	}
	if hasBackoffLimitPerIndex(s.job) {
		if d, ok := s.delayed[podIndex(p, *s.job.Spec.Completions)]; ok && d.UID == p.UID {
			return false
		}
	}
	return true
}

// indexStatus writes completedIndexes, succeeded and failedIndexes of an
// Indexed Job and tells whether they changed.
func (s *jobState) indexStatus(newIdx []int) bool {
	st := &s.job.Status
	s.succeededIdx.Insert(newIdx...)
	completed := formatIndexes(s.succeededIdx)
	changed := completed != st.CompletedIndexes
	st.Succeeded, st.CompletedIndexes = int32(s.succeededIdx.Len()), completed
	var failed *string
	if s.failedIdx != nil {
		failed = ptr.To(formatIndexes(s.failedIdx))
	}
	if !ptr.Equal(st.FailedIndexes, failed) {
		st.FailedIndexes, changed = failed, true
	}
	return changed
}

// recordInterim adds the interim FailureTarget or SuccessCriteriaMet
// condition before any finalizer goes, and turns s.finished into the final
// Failed or Complete condition.
func (s *jobState) recordInterim() bool {
	f, j := s.finished, s.job
	switch {
	case f == nil:
		return false
	case f.Type == batchv1.JobFailureTarget:
		setCondition(j, f.Type, f.Reason, f.Message, s.now)
		s.finished = newCondition(batchv1.JobFailed, f.Reason, f.Message, s.now)
		return true
	case f.Type == batchv1.JobSuccessCriteriaMet:
		added := !hasCondition(j, batchv1.JobSuccessCriteriaMet)
		if added {
			j.Status.Conditions = append(j.Status.Conditions, *f)
		}
		s.finished = newCondition(batchv1.JobComplete, f.Reason, f.Message, s.now)
		return added
	}
	return false
}

// flushAndRemove writes the status with the new uncounted pods, removes the
// finalizers, and moves the pods that lost theirs to the counters; it
// returns whether the status still needs a write.
func (c *Controller) flushAndRemove(ctx context.Context, s *jobState, pods []*corev1.Pod, withFinalizer sets.Set[types.UID], flush bool) (bool, error) {
	if flush {
		if err := c.updateStatus(ctx, s); err != nil {
			return false, fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		c.setBackoff(s.key, s.backoff)
		flush = false
	}
	var rmErr error
	if len(pods) > 0 {
		var done sets.Set[types.UID]
		done, rmErr = c.removeFinalizers(ctx, s, pods)
		withFinalizer = withFinalizer.Difference(done)
	}
	if moveCounted(&s.job.Status, withFinalizer) {
		flush = true
	}
	if rmErr != nil && flush {
		if err := c.updateStatus(ctx, s); err != nil {
			return false, fmt.Errorf("removing uncounted pods from status: %w", err)
		}
	}
	return flush, rmErr
}

// moveCounted moves the uncounted pods that no longer hold the finalizer
// to status.succeeded/failed and tells whether any moved.
func moveCounted(st *batchv1.JobStatus, withFinalizer sets.Set[types.UID]) bool {
	u := st.UncountedTerminatedPods
	keep := func(uids []types.UID) []types.UID {
		return slices.DeleteFunc(slices.Clone(uids), func(id types.UID) bool { return !withFinalizer.Has(id) })
	}
	succeeded, failed := keep(u.Succeeded), keep(u.Failed)
	moved := len(u.Succeeded) - len(succeeded) + len(u.Failed) - len(failed)
	st.Succeeded += int32(len(u.Succeeded) - len(succeeded))
	st.Failed += int32(len(u.Failed) - len(failed))
	u.Succeeded, u.Failed = nilIfEmpty(succeeded), nilIfEmpty(failed)
	return moved > 0
}

func nilIfEmpty(uids []types.UID) []types.UID {
	if len(uids) == 0 {
		return nil
	}
	return uids
}

// enactFinished sets the final condition once no pod is uncounted or
// terminating (upstream's enactJobFinished).
func (s *jobState) enactFinished() bool {
	f, j := s.finished, s.job
	if f == nil {
		return false
	}
	if u := j.Status.UncountedTerminatedPods; len(u.Succeeded)+len(u.Failed) > 0 || s.terminating > 0 {
		return false
	}
	setCondition(j, f.Type, f.Reason, f.Message, s.now)
	if f.Type == batchv1.JobComplete {
		j.Status.CompletionTime = ptr.To(metav1.NewTime(s.now))
	}
	return true
}

// recordFinished emits the events of a Job that just finished.
func (c *Controller) recordFinished(j *batchv1.Job, f *batchv1.JobCondition) {
	if f.Type != batchv1.JobComplete {
		c.recorder.Event(j, corev1.EventTypeWarning, f.Reason, f.Message)
		return
	}
	if j.Spec.Completions != nil && j.Status.Succeeded > *j.Spec.Completions {
		c.recorder.Event(j, corev1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
	}
	c.recorder.Event(j, corev1.EventTypeNormal, "Completed", "Job completed")
}

// updateStatus writes s.job's status and keeps the result.
func (c *Controller) updateStatus(ctx context.Context, s *jobState) error {
	out, err := c.client.BatchV1().Jobs(s.job.Namespace).UpdateStatus(ctx, s.job, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of job %s: %w", s.key, err)
	}
	if out.Status.UncountedTerminatedPods == nil {
		out.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	s.job = out
	return nil
}
