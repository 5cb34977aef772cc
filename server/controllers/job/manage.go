package job

import (
	"context"
	"errors"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// managePods creates or deletes pods toward the wanted number of active
// ones, unless the cache still lags behind the last sync's writes or the
// failure back-off has not passed.
func (c *Controller) managePods(ctx context.Context, s *jobState) error {
	if !c.exp.satisfied(s.key, s.job.UID) {
		return nil
	}
	if isIndexed(s.job) {
		return c.manageIndexed(ctx, s)
	}
	j := s.job
	want := ptr.Deref(j.Spec.Parallelism, 1)
	if j.Spec.Completions != nil {
		want = min(want, max(*j.Spec.Completions-j.Status.Succeeded, 0))
	} else if j.Status.Succeeded > 0 {
		want = min(want, int32(len(s.active)))
	}
	diff := int(want) - len(s.active)
	if diff < 0 {
		return c.deletePods(ctx, s, surplus(s.active, -diff))
	}
	if diff == 0 {
		return nil
	}
	idx := make([]int, min(diff, maxBurst))
	for i := range idx {
		idx[i] = -1
	}
	return c.createPods(ctx, s, idx)
}

// manageIndexed keeps one active pod per pending index, lowest first.
func (c *Controller) manageIndexed(ctx context.Context, s *jobState) error {
	j := s.job
	completions := *j.Spec.Completions
	done := parseIndexes(j.Status.CompletedIndexes, int(completions))
	taken := map[int]bool{}
	var extra []*corev1.Pod
	for _, p := range s.active {
		i := podIndex(p, completions)
		if i < 0 || taken[i] || done.Has(i) {
			extra = append(extra, p)
			continue
		}
		taken[i] = true
	}
	if len(extra) > 0 {
		return c.deletePods(ctx, s, extra)
	}
	want := int(min(ptr.Deref(j.Spec.Parallelism, 1), completions-int32(done.Len())))
	if diff := len(s.active) - want; diff > 0 {
		return c.deletePods(ctx, s, surplus(s.active, diff))
	}
	var idx []int
	for i := 0; i < int(completions) && len(s.active)+len(idx) < want && len(idx) < maxBurst; i++ {
		if !done.Has(i) && !taken[i] {
			idx = append(idx, i)
		}
	}
	return c.createPods(ctx, s, idx)
}

// createPods creates one pod per entry of idx (-1: NonIndexed), after the back-off.
func (c *Controller) createPods(ctx context.Context, s *jobState, idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	if d := c.backoffLeft(s); d > 0 {
		s.requeueAfter(d)
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

// surplus picks n pods to delete: not scheduled, then not ready, then newest.
func surplus(active []*corev1.Pod, n int) []*corev1.Pod {
	pods := slices.Clone(active)
	rank := func(p *corev1.Pod) int {
		switch {
		case p.Spec.NodeName == "":
			return 0
		case readyCount([]*corev1.Pod{p}) == 0:
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
