package daemonset

import (
	"context"

	"go.uber.org/zap"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func allowsSurge(ds *appsv1.DaemonSet) bool {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil || ru.MaxSurge == nil {
		return false
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, 1, true)
	return err == nil && n > 0
}

// budgets are maxSurge and maxUnavailable scaled to the desired number
// of pods (rounded up; both zero means maxUnavailable 1).
func budgets(ds *appsv1.DaemonSet, desired int) (surge, unavailable int) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ru == nil {
		return 0, 1
	}
	if ru.MaxSurge != nil {
		surge, _ = intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, desired, true)
	}
	if ru.MaxUnavailable != nil {
		unavailable, _ = intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, desired, true)
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

// splitPods returns the node's one current and one old pod; ok is false
// when the node has more than one of either (manage cleans that up first).
func splitPods(st *state, pods []*corev1.Pod) (cur, old *corev1.Pod, ok bool) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if isUpdated(p, st.hash, st.gen) {
			if cur != nil {
				return nil, nil, false
			}
			cur = p
		} else {
			if old != nil {
				return nil, nil, false
			}
			old = p
		}
	}
	return cur, old, true
}

func (c *Controller) desired(st *state) int {
	n := 0
	for _, node := range st.nodes {
		if run, _ := shouldRun(node, st.spec); run {
			n++
		}
	}
	return n
}

// wantedNodes is st.byNode plus an empty entry for each node that should
// run a daemon pod and has none (upstream's updatedDesiredNodeCounts): a
// node whose old pod is gone and whose new one the cache does not show
// yet counts against maxUnavailable.
func wantedNodes(st *state) map[string][]*corev1.Pod {
	out := make(map[string][]*corev1.Pod, len(st.nodes))
	for node, pods := range st.byNode {
		out[node] = pods
	}
	for _, node := range st.nodes {
		if run, _ := shouldRun(node, st.spec); run {
			if _, ok := out[node.Name]; !ok {
				out[node.Name] = nil
			}
		}
	}
	return out
}

// rollingUpdate replaces old pods within the budgets (upstream's rollingUpdate).
func (c *Controller) rollingUpdate(ctx context.Context, st *state) error {
	surge, unavailable := budgets(st.ds, c.desired(st))
	c.log.Debug("rolling update", zap.String("daemonset", st.key), zap.String("hash", st.hash), zap.Int("maxSurge", surge), zap.Int("maxUnavailable", unavailable), zap.Int("nodes", len(st.byNode)))
	if surge == 0 {
		return c.syncNodes(ctx, st, c.replaceInPlace(st, unavailable), nil)
	}
	del, create := c.replaceWithSurge(st, surge)
	return c.syncNodes(ctx, st, del, create)
}

// replaceInPlace deletes unavailable old pods, then available ones while
// fewer than maxUnavailable nodes lack an available pod.
func (c *Controller) replaceInPlace(st *state, maxUnavailable int) []*corev1.Pod {
	now, minReady := c.now(), st.ds.Spec.MinReadySeconds
	numUnavailable := 0
	var replace, candidates []*corev1.Pod
	for _, pods := range wantedNodes(st) {
		cur, old, ok := splitPods(st, pods)
		switch {
		case !ok, cur == nil && old == nil, cur != nil && old != nil:
			numUnavailable++
		case cur != nil:
			if !isAvailable(cur, minReady, now) {
				numUnavailable++
			}
		case !isAvailable(old, minReady, now):
			replace = append(replace, old)
			numUnavailable++
		default:
			candidates = append(candidates, old)
		}
	}
	room := min(max(maxUnavailable-numUnavailable, 0), len(candidates))
	byAge(candidates)
	return append(replace, candidates[:room]...)
}

// replaceWithSurge starts new pods beside old ones within maxSurge and
// deletes an old pod once its replacement is available.
func (c *Controller) replaceWithSurge(st *state, maxSurge int) (del []*corev1.Pod, create []string) {
	now, minReady := c.now(), st.ds.Spec.MinReadySeconds
	numSurge := 0
	var candidates []string
	for node, pods := range wantedNodes(st) {
		cur, old, ok := splitPods(st, pods)
		switch {
		case !ok:
			numSurge++
		case old == nil:
		case cur == nil && !isAvailable(old, minReady, now):
			create = append(create, node) // nothing to lose: replace now
		case cur == nil:
			candidates = append(candidates, node)
		case !isAvailable(cur, minReady, now):
			numSurge++
		default:
			del = append(del, old)
		}
	}
	room := min(max(maxSurge-numSurge, 0), len(candidates))
	return del, append(create, candidates[:room]...)
}
