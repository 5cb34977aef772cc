package job

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// trackFinishedPods counts finished pods in three steps, as upstream:
// record their uids in status.uncountedTerminatedPods (one status write),
// remove their finalizers, then move them to succeeded/failed (left to the
// sync's final status write).
func (c *Controller) trackFinishedPods(ctx context.Context, s *jobState) error {
	j := s.job
	if j.Status.UncountedTerminatedPods == nil {
		j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	u := j.Status.UncountedTerminatedPods
	seen := sets.New(u.Succeeded...).Insert(u.Failed...)
	newFailed, newSucceeded := 0, 0
	completed := parseIndexes(j.Status.CompletedIndexes, completionsOf(j))
	for _, p := range s.pods {
		if !hasFinalizer(p) || seen.Has(p.UID) {
			continue
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			if isIndexed(j) {
				i := podIndex(p, *j.Spec.Completions)
				if i < 0 || completed.Has(i) {
					u.Failed = append(u.Failed, p.UID) // a duplicate index counts as nothing useful
					continue
				}
				completed.Insert(i)
			}
			u.Succeeded = append(u.Succeeded, p.UID)
			newSucceeded++
		case podFailed(p):
			u.Failed = append(u.Failed, p.UID)
			newFailed++
		}
	}
	c.noteOutcome(s, newSucceeded, newFailed)
	if newFailed+newSucceeded > 0 {
		j.Status.CompletedIndexes = formatIndexes(completed)
		out, err := c.client.BatchV1().Jobs(j.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("record finished pods of job %s: %w", s.key, err)
		}
		s.job, j = out, out
		if j.Status.UncountedTerminatedPods == nil {
			j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
		}
		u = j.Status.UncountedTerminatedPods
	}
	uncounted := sets.New(u.Succeeded...).Insert(u.Failed...)
	var done []*corev1.Pod
	for _, p := range s.pods {
		if uncounted.Has(p.UID) {
			done = append(done, p)
		}
	}
	if err := c.removeFinalizers(ctx, done); err != nil {
		return err
	}
	j.Status.Succeeded += int32(len(u.Succeeded))
	j.Status.Failed += int32(len(u.Failed))
	u.Succeeded, u.Failed = nil, nil
	return nil
}

func completionsOf(j *batchv1.Job) int {
	if j.Spec.Completions == nil {
		return 0
	}
	return int(*j.Spec.Completions)
}

// backoffRecord counts a Job's consecutive pod failures.
type backoffRecord struct {
	failures int
	last     time.Time
}

// Back-off between pod re-creates after failures (upstream's DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff).
const (
	backoffBase = 10 * time.Second
	backoffMax  = 6 * time.Minute
)

// noteOutcome updates the back-off: a success resets it, failures grow it.
func (c *Controller) noteOutcome(s *jobState, succeeded, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.backoff[s.key]
	if succeeded > 0 {
		r = backoffRecord{}
	}
	if failed > 0 {
		r.failures += failed
		r.last = s.now
	}
	c.backoff[s.key] = r
}

// backoffLeft is how long new pods must still wait after the last failure.
func (c *Controller) backoffLeft(s *jobState) time.Duration {
	c.mu.Lock()
	r := c.backoff[s.key]
	c.mu.Unlock()
	return backoffLeftAt(r, s.now, c.backoffBase)
}

func backoffLeftAt(r backoffRecord, now time.Time, base time.Duration) time.Duration {
	if r.failures == 0 {
		return 0
	}
	d := base
	for i := 1; i < r.failures && d < backoffMax; i++ {
		d *= 2
	}
	d = min(d, backoffMax)
	return r.last.Add(d).Sub(now)
}
