package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// spreadScoreConstraints returns the ScheduleAnyway constraints to score
// with, the system defaults (selector from cfg) for pods without any, and
// whether nodes must carry every topology key.
func spreadScoreConstraints(pod *corev1.Pod, cfg *Config) ([]spreadConstraint, bool) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return parseSpread(pod, pod.Spec.TopologySpreadConstraints, corev1.ScheduleAnyway), true
	}
	if cfg.DefaultSpreadSelector == nil {
		return nil, false
	}
	sel := cfg.DefaultSpreadSelector(pod)
	if sel == nil || sel.Empty() {
		return nil, false
	}
	cs := parseSpread(pod, SystemDefaultSpread(), corev1.ScheduleAnyway)
	for i := range cs {
		cs[i].selector = sel
	}
	return cs, false
}

// podTopologySpreadScores is upstream's PreScore, Score and
// NormalizeScore for feasible nodes; nil when the plugin is skipped.
func podTopologySpreadScores(ps *podState, snap *Snapshot, nodes []*NodeInfo, cfg *Config) []int64 {
	cs, requireAll := spreadScoreConstraints(ps.pod, cfg)
	if len(cs) == 0 {
		return nil
	}
	ignored := make([]bool, len(nodes))
	counts := make([]map[string]int64, len(cs))
	for i := range counts {
		counts[i] = map[string]int64{}
	}
	nIgnored := 0
	for j, ni := range nodes {
		if requireAll && !hasAllKeys(ni.Node.Labels, cs) {
			ignored[j] = true
			nIgnored++
			continue
		}
		for i := range cs {
			if cs[i].key != LabelHostname {
				if v, ok := ni.Node.Labels[cs[i].key]; ok || !requireAll {
					counts[i][v] += 0
				}
			}
		}
	}
	weights := make([]float64, len(cs))
	for i := range cs {
		size := len(counts[i])
		if cs[i].key == LabelHostname {
			size = len(nodes) - nIgnored
		}
		weights[i] = math.Log(float64(size + 2))
	}
	countAllNodes(ps.pod, snap, cs, counts, requireAll)
	return spreadNodeScores(ps.pod, nodes, cs, counts, weights, ignored)
}

// countAllNodes adds every node's matching pods to the domains seen.
func countAllNodes(pod *corev1.Pod, snap *Snapshot, cs []spreadConstraint, counts []map[string]int64, requireAll bool) {
	for _, ni := range snap.Nodes {
		if requireAll && !hasAllKeys(ni.Node.Labels, cs) {
			continue
		}
		for i := range cs {
			if cs[i].key == LabelHostname || !cs[i].includes(pod, ni.Node) {
				continue
			}
			v := ni.Node.Labels[cs[i].key]
			if _, ok := counts[i][v]; ok {
				counts[i][v] += int64(countMatching(ni, cs[i].selector, pod.Namespace))
			}
		}
	}
}

func spreadNodeScores(pod *corev1.Pod, nodes []*NodeInfo, cs []spreadConstraint, counts []map[string]int64, weights []float64, ignored []bool) []int64 {
	scores := make([]int64, len(nodes))
	minv, maxv := int64(math.MaxInt64), int64(0)
	for j, ni := range nodes {
		if ignored[j] {
			continue
		}
		var score float64
		for i := range cs {
			v, ok := ni.Node.Labels[cs[i].key]
			if !ok {
				continue
			}
			cnt := counts[i][v]
			if cs[i].key == LabelHostname {
				cnt = int64(countMatching(ni, cs[i].selector, pod.Namespace))
			}
			score += float64(cnt)*weights[i] + float64(cs[i].maxSkew-1)
		}
		scores[j] = int64(math.Round(score))
		minv, maxv = min(minv, scores[j]), max(maxv, scores[j])
	}
	for j := range scores {
		switch {
		case ignored[j]:
			scores[j] = 0
		case maxv == 0:
			scores[j] = MaxNodeScore
		default:
			scores[j] = MaxNodeScore * (maxv + minv - scores[j]) / maxv
		}
	}
	return scores
}
