package job

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

var labelsAll = labels.Everything()

// jobState is what one sync of a Job works on.
type jobState struct {
	job  *batchv1.Job
	key  string
	now  time.Time
	pods []*corev1.Pod // pods the Job controls (after adoption)
	// active are neither finished nor being deleted; terminating are being
	// deleted but not finished (this sync's deletions included).
	active      []*corev1.Pod
	ready       int32
	terminating int32
	// uncounted* are status.uncountedTerminatedPods; expectedRm the pods
	// whose finalizer removal the cache does not show yet.
	uncountedSucceeded, uncountedFailed, expectedRm sets.Set[types.UID]
	// newSucceeded and newFailed finished since the last sync (they still
	// hold the finalizer and are not in uncountedTerminatedPods).
	newSucceeded, newFailed []*corev1.Pod
	succeeded, failed       int32
	// Indexed Jobs: succeeded indexes before this sync and now; failed
	// indexes (backoffLimitPerIndex only) and per index the failed pod
	// whose deletion waits for its replacement.
	prevSucceededIdx, succeededIdx, failedIdx sets.Set[int]
	delayed                                   map[int]*corev1.Pod
	finished                                  *batchv1.JobCondition // how the Job ends, once decided
	backoff                                   backoffRecord         // the back-off with this sync's finished pods
	requeue                                   time.Duration         // 0 = none
}

func (s *jobState) requeueAfter(d time.Duration) {
	if d > 0 && (s.requeue == 0 || d < s.requeue) {
		s.requeue = d
	}
}

// syncJob reconciles one Job as upstream's syncJob: decide whether it ends,
// delete or create pods, then count finished pods, remove their finalizers
// and write the status (with the terminal condition once no pod is left).
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
	if managedElsewhere(cached) {
		return nil
	}
	if isFinished(cached) {
		c.forgetBackoff(key)
		return c.releaseFinishedPods(ctx, cached)
	}
	if m := ptr.Deref(cached.Spec.CompletionMode, batchv1.NonIndexedCompletion); m != batchv1.NonIndexedCompletion && m != batchv1.IndexedCompletion {
		c.recorder.Event(cached, corev1.EventTypeWarning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return nil
	}
	j := cached.DeepCopy()
	satisfied := c.exp.satisfied(key, j.UID) // before listing pods, as upstream
	pods, err := c.claimPods(ctx, j)
	if err != nil {
		return err
	}
	s := c.newState(j, key, pods)
	if j.Status.StartTime == nil && !ptr.Deref(j.Spec.Suspend, false) {
		j.Status.StartTime = ptr.To(metav1.NewTime(s.now))
	}
	s.decide()
	var manageErr error
	suspendChanged := false
	if s.finished != nil {
		manageErr = c.stopActive(ctx, s, satisfied)
	} else {
		suspendChanged, manageErr = c.manageAndComplete(ctx, s, satisfied)
	}
	active := int32(len(s.active))
	changed := suspendChanged || (cached.Status.StartTime == nil && j.Status.StartTime != nil) || j.Status.Active != active ||
		!ptr.Equal(j.Status.Ready, &s.ready) || !ptr.Equal(j.Status.Terminating, &s.terminating)
	j.Status.Active, j.Status.Ready, j.Status.Terminating = active, ptr.To(s.ready), ptr.To(s.terminating)
	if err := c.trackStatus(ctx, s, changed); err != nil {
		return fmt.Errorf("tracking status of job %s: %w", key, err)
	}
	if s.requeue > 0 {
		c.queue.AddAfter(key, s.requeue)
	}
	return manageErr
}

// managedElsewhere: spec.managedBy names another controller, which then
// owns the Job's pods and status (JobManagedBy, GA in 1.35).
func managedElsewhere(j *batchv1.Job) bool {
	return ptr.Deref(j.Spec.ManagedBy, batchv1.JobControllerName) != batchv1.JobControllerName
}

// newState sorts the Job's pods and counts those that finished.
func (c *Controller) newState(j *batchv1.Job, key string, pods []*corev1.Pod) *jobState {
	if j.Status.UncountedTerminatedPods == nil {
		j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	u := j.Status.UncountedTerminatedPods
	s := &jobState{job: j, key: key, now: c.now(), pods: pods, active: activePods(pods),
		terminating:        int32(terminatingCount(pods)),
		uncountedSucceeded: sets.New(u.Succeeded...), uncountedFailed: sets.New(u.Failed...),
		expectedRm: c.exp.finalizersExpected(key, j.UID)}
	s.ready = readyCount(s.active)
	s.newSucceeded = s.uncountedPods(s.uncountedSucceeded, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	s.newFailed = s.uncountedPods(s.uncountedFailed, func(p *corev1.Pod) bool { return isPodFailed(p, j) })
	s.succeeded = j.Status.Succeeded + int32(len(s.newSucceeded)+s.uncountedSucceeded.Len())
	s.failed = j.Status.Failed + int32(s.uncountedFailed.Len())
	for _, p := range s.newFailed {
		if failureCounts(j, p) {
			s.failed++
		}
	}
	s.backoff = nextBackoff(c.backoffOf(key), s.newSucceeded, s.newFailed)
	return s
}

// uncountedPods are the pods that pass keep, still hold the finalizer, are
// not in skip and (Indexed) have a valid index (getValidPodsWithFilter).
func (s *jobState) uncountedPods(skip sets.Set[types.UID], keep func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range s.pods {
		if !hasFinalizer(p) || skip.Has(p.UID) || s.expectedRm.Has(p.UID) {
			continue
		}
		if isIndexed(s.job) && podIndex(p, *s.job.Spec.Completions) < 0 {
			continue
		}
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// stopActive deletes the active pods of a Job that is ending; the ending is
// only recorded once every delete went through and the cache shows this
// Job's earlier writes.
func (c *Controller) stopActive(ctx context.Context, s *jobState, satisfied bool) error {
	n := len(s.active)
	deleted, err := c.deletePods(ctx, s, s.active, false)
	if deleted != n || !satisfied {
		s.finished = nil
	}
	return err
}

// manageAndComplete creates or deletes pods toward the wanted number, then
// checks spec.completions and the Suspended condition; it tells whether
// that condition changed.
func (c *Controller) manageAndComplete(ctx context.Context, s *jobState, satisfied bool) (bool, error) {
	j := s.job
	managed := satisfied && j.DeletionTimestamp == nil
	var err error
	if managed {
		err = c.manageJob(ctx, s)
	}
	switch {
	case s.complete():
		s.finished = newCondition(batchv1.JobSuccessCriteriaMet, reasonCompletions, msgCompletions, s.now)
	case !managed:
	case ptr.Deref(j.Spec.Suspend, false):
		if setCondition(j, batchv1.JobSuspended, "JobSuspended", "Job suspended", s.now) {
			c.recorder.Event(j, corev1.EventTypeNormal, "Suspended", "Job suspended")
			j.Status.StartTime = nil // MutableSchedulingDirectivesForSuspendedJobs (on since 1.36)
			return true, err
		}
	case condition(j, batchv1.JobSuspended) != nil:
		if setConditionStatus(j, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", s.now) {
			c.recorder.Event(j, corev1.EventTypeNormal, "Resumed", "Job resumed")
			// activeDeadlineSeconds counts the time the Job runs, from now.
			j.Status.StartTime = ptr.To(metav1.NewTime(s.now))
			return true, err
		}
	}
	return false, err
}
