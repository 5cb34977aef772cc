package job

import (
	"math"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Pods of a Job with spec.backoffLimitPerIndex carry how many earlier pods
// of their index failed (counted) and were ignored by the pod failure policy.
const (
	failureCountAnnotation = batchv1.JobIndexFailureCountAnnotation
	ignoredCountAnnotation = batchv1.JobIndexIgnoredFailureCountAnnotation
)

func hasBackoffLimitPerIndex(j *batchv1.Job) bool { return j.Spec.BackoffLimitPerIndex != nil }

// annotationCount reads a failure-count annotation; anything but an int32
// of at least 0 is 0, as upstream.
func annotationCount(p *corev1.Pod, key string) int32 {
	v, err := strconv.Atoi(p.Annotations[key])
	if err != nil || v < 0 || v > math.MaxInt32 {
		return 0
	}
	return int32(v)
}

// indexFailed tells whether a failed pod fails its index for good: it
// matched FailIndex, or it counts and its index used up backoffLimitPerIndex.
func indexFailed(j *batchv1.Job, p *corev1.Pod) bool {
	if !isPodFailed(p, j) {
		return false
	}
	m := matchPodFailurePolicy(j.Spec.PodFailurePolicy, p)
	if m.action == batchv1.PodFailurePolicyActionFailIndex {
		return true
	}
	return m.counts && annotationCount(p, failureCountAnnotation) >= *j.Spec.BackoffLimitPerIndex
}

// failedIndexes is status.failedIndexes plus the indexes that failed since
// (pods not counted yet, so still holding the tracking finalizer).
func failedIndexes(j *batchv1.Job, pods []*corev1.Pod) sets.Set[int] {
	completions := completionsOf(j)
	out := sets.New[int]()
	if j.Status.FailedIndexes != nil {
		out = parseIndexes(*j.Status.FailedIndexes, completions)
	}
	for _, p := range pods {
		if ix := podIndex(p, int32(completions)); ix >= 0 && hasFinalizer(p) && indexFailed(j, p) {
			out.Insert(ix)
		}
	}
	return out
}

// delayedPods picks, per index that is neither done nor failed nor running,
// the last failed pod: it keeps its finalizer (so it is not deleted) until
// its replacement exists, which takes its failure counts over (upstream's
// getPodsWithDelayedDeletionPerIndex).
func delayedPods(s *jobState) map[int]*corev1.Pod {
	completions := int32(completionsOf(s.job))
	running := indexesOf(s.active, completions)
	out := map[int]*corev1.Pod{}
	for _, p := range s.pods {
		ix := podIndex(p, completions)
		if ix < 0 || !hasFinalizer(p) || s.expectedRm.Has(p.UID) || !isPodFailed(p, s.job) ||
			s.succeededIdx.Has(ix) || s.failedIdx.Has(ix) || running.Has(ix) {
			continue
		}
		last, ok := out[ix]
		if !ok || (absoluteFailures(last) <= absoluteFailures(p) && !finishedTime(p).Before(finishedTime(last))) {
			out[ix] = p
		}
	}
	return out
}

func absoluteFailures(p *corev1.Pod) int32 {
	return annotationCount(p, failureCountAnnotation) + annotationCount(p, ignoredCountAnnotation)
}

// replacementCounts are the failure-count annotations of the pod replacing
// failed (nil: the index's first pod).
func replacementCounts(j *batchv1.Job, failed *corev1.Pod) (counted, ignored int32) {
	if failed == nil {
		return 0, 0
	}
	counted, ignored = annotationCount(failed, failureCountAnnotation), annotationCount(failed, ignoredCountAnnotation)
	if failureCounts(j, failed) {
		counted++
	} else {
		ignored++
	}
	return counted, ignored
}

// indexBackoffLeft is how long a re-create of the index whose last failed
// pod is failed must still wait.
func indexBackoffLeft(failed *corev1.Pod, now time.Time, base time.Duration) time.Duration {
	if failed == nil {
		return 0
	}
	return backoffLeft(absoluteFailures(failed)+1, finishedTime(failed), now, base, backoffMax)
}

// indexesOf are the completion indexes of pods.
func indexesOf(pods []*corev1.Pod, completions int32) sets.Set[int] {
	out := sets.New[int]()
	for _, p := range pods {
		if ix := podIndex(p, completions); ix >= 0 {
			out.Insert(ix)
		}
	}
	return out
}
