package job

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// manageJob creates or deletes pods toward the wanted number of active ones
// (upstream's manageJob): a suspended Job loses all of them; surplus pods
// and, Indexed, pods of duplicate or invalid indexes are deleted without
// being counted as failed; new pods wait for the failure back-off (per
// index with backoffLimitPerIndex).
func (c *Controller) manageJob(ctx context.Context, s *jobState) error {
	j := s.job
	if ptr.Deref(j.Spec.Suspend, false) {
		_, err := c.deletePods(ctx, s, s.active, true)
		return err
	}
	want := s.wantActive()
	rm := podsForRemoval(j, s.active, max(len(s.active)-int(want), 0))
	if len(rm) > 0 {
		_, err := c.deletePods(ctx, s, rm[:min(len(rm), maxBurst)], true)
		return err
	}
	var terminating int32
	if onlyReplaceFailed(j) {
		terminating = s.terminating
	}
	diff := int(want - terminating - int32(len(s.active)))
	if diff <= 0 {
		return nil
	}
	if !hasBackoffLimitPerIndex(j) {
		if left := backoffLeft(s.backoff.failures, s.backoff.last, s.now, c.backoffBase, backoffMax); left > 0 {
			s.requeueAfter(left)
			return nil
		}
	}
	diff = min(diff, maxBurst)
	if !isIndexed(j) {
		return c.createPods(ctx, s, slices.Repeat([]int{-1}, diff))
	}
	idx := firstPendingIndexes(s, diff)
	if hasBackoffLimitPerIndex(j) {
		left := c.readyIndexes(s, &idx)
		if len(idx) == 0 {
			s.requeueAfter(left)
			return nil
		}
	}
	return c.createPods(ctx, s, idx)
}

// wantActive is how many pods should run: parallelism, capped by the
// completions left; without completions, after a success only those running.
func (s *jobState) wantActive() int32 {
	j := s.job
	parallelism := ptr.Deref(j.Spec.Parallelism, 1)
	if j.Spec.Completions == nil {
		if s.succeeded > 0 {
			return int32(len(s.active))
		}
		return parallelism
	}
	return max(min(*j.Spec.Completions-s.succeeded, parallelism), 0)
}

// firstPendingIndexes are the lowest n indexes that are neither succeeded,
// failed nor running (nor, with podReplacementPolicy Failed, terminating).
func firstPendingIndexes(s *jobState, n int) []int {
	completions := *s.job.Spec.Completions
	busy := indexesOf(s.active, completions).Union(s.succeededIdx)
	if onlyReplaceFailed(s.job) {
		var terminating []*corev1.Pod
		for _, p := range s.pods {
			if p.DeletionTimestamp != nil && !isTerminal(p) {
				terminating = append(terminating, p)
			}
		}
		busy = busy.Union(indexesOf(terminating, completions))
	}
	busy = busy.Union(s.failedIdx)
	var out []int
	for i := 0; i < int(completions) && len(out) < n; i++ {
		if !busy.Has(i) {
			out = append(out, i)
		}
	}
	return out
}

// readyIndexes keeps the indexes whose per-index back-off has passed and
// returns the shortest wait of the others.
func (c *Controller) readyIndexes(s *jobState, idx *[]int) (wait time.Duration) {
	var ready []int
	for _, i := range *idx {
		left := indexBackoffLeft(s.delayed[i], s.now, c.backoffBase)
		if left == 0 {
			ready = append(ready, i)
		} else if wait == 0 || left < wait {
			wait = left
		}
	}
	*idx = ready
	return wait
}

// createPods creates one pod per entry of idx (-1: NonIndexed).
func (c *Controller) createPods(ctx context.Context, s *jobState, idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	c.exp.expectAdds(s.key, s.job.UID, len(idx))
	var errs []error
	for _, i := range idx {
		if err := c.createPod(ctx, s, i); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// podsForRemoval picks at least n active pods to delete (upstream's
// activePodsForRemoval): for Indexed Jobs first those without a valid index
// and all but one pod of each index, then the least advanced pods.
func podsForRemoval(j *batchv1.Job, active []*corev1.Pod, n int) []*corev1.Pod {
	var rm, left []*corev1.Pod
	if isIndexed(j) {
		byIndex := map[int][]*corev1.Pod{}
		for _, p := range active {
			if ix := podIndex(p, *j.Spec.Completions); ix < 0 {
				rm = append(rm, p)
			} else {
				byIndex[ix] = append(byIndex[ix], p)
			}
		}
		for _, pods := range byIndex {
			ranked := surplus(pods, len(pods)) // least advanced first: keep the last
			rm, left = append(rm, ranked[:len(ranked)-1]...), append(left, ranked[len(ranked)-1])
		}
	} else {
		left = active
	}
	if len(rm) < n {
		rm = append(rm, surplus(left, n-len(rm))...)
	}
	return rm
}

// surplus picks n pods to delete: not scheduled, then not ready, then newest.
func surplus(active []*corev1.Pod, n int) []*corev1.Pod {
	pods := slices.Clone(active)
	rank := func(p *corev1.Pod) int {
		switch {
		case p.Spec.NodeName == "":
			return 0
		case !podReady(p):
			return 1
		}
		return 2
	}
	sort.SliceStable(pods, func(a, b int) bool {
		ra, rb := rank(pods[a]), rank(pods[b])
		if ra != rb {
			return ra < rb
		}
		return pods[b].CreationTimestamp.Before(&pods[a].CreationTimestamp)
	})
	return pods[:min(n, len(pods))]
}
