package scheduler

import (
	"errors"
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
)

// ErrNoNodes: the snapshot has no nodes at all.
var ErrNoNodes = errors.New("no nodes available to schedule pods")

// Config tunes Schedule. The zero value is kube-scheduler's default
// profile with deterministic tie-breaking.
type Config struct {
	Strategy ScoringStrategy
	// Weights of the score plugins; the zero value means DefaultWeights.
	Weights Weights
	// Rand, if set, breaks ties between top-scoring nodes at random (as
	// upstream does); nil picks the first such node in snapshot order.
	Rand *rand.Rand
}

// Result is a scheduling decision.
type Result struct {
	Node string
	// Feasible is how many nodes passed the filters.
	Feasible int
}

// Schedule picks a node for pod from snap: filter, then score. A pod that
// fits nowhere gets a *FitError (errors.Is ErrUnschedulable).
func Schedule(pod *corev1.Pod, snap *Snapshot, cfg Config) (Result, error) {
	if len(snap.Nodes) == 0 {
		return Result{}, fmt.Errorf("schedule pod %s/%s: %w", pod.Namespace, pod.Name, ErrNoNodes)
	}
	ps := newPodState(pod)
	feasible := make([]*NodeInfo, 0, len(snap.Nodes))
	buf := make([]string, 0, 8)
	for _, ni := range snap.Nodes {
		if len(runFilters(ps, ni, buf)) == 0 {
			feasible = append(feasible, ni)
		}
	}
	if len(feasible) == 0 {
		return Result{}, newFitError(ps, snap)
	}
	if len(feasible) == 1 {
		return Result{Node: feasible[0].Node.Name, Feasible: 1}, nil
	}
	scores := scoreNodes(ps, feasible, cfg)
	best := selectHost(scores, cfg.Rand)
	return Result{Node: feasible[best].Node.Name, Feasible: len(feasible)}, nil
}

// newFitError re-runs the filters to record every node's reasons; this
// keeps the common (feasible) path free of per-node bookkeeping.
func newFitError(ps *podState, snap *Snapshot) *FitError {
	fe := &FitError{Pod: ps.pod.Namespace + "/" + ps.pod.Name, NumAllNodes: len(snap.Nodes),
		NodeReasons: make(map[string][]string, len(snap.Nodes))}
	for _, ni := range snap.Nodes {
		fe.NodeReasons[ni.Node.Name] = runFilters(ps, ni, nil)
	}
	return fe
}

// scoreNodes returns the weighted total per feasible node.
func scoreNodes(ps *podState, nodes []*NodeInfo, cfg Config) []int64 {
	w := cfg.Weights
	if w == (Weights{}) {
		w = DefaultWeights()
	}
	total := make([]int64, len(nodes))
	for i, ni := range nodes {
		total[i] = w.NodeResourcesFit*resourceFitScore(cfg.Strategy, ps, ni) +
			w.BalancedAllocation*balancedAllocationScore(ps, ni)
	}
	addNormalized(total, w.NodeAffinity, hasPreferredAffinity(ps.pod), false, nodes,
		func(ni *NodeInfo) int64 { return preferredAffinityScore(ps.pod, ni.Node) })
	addNormalized(total, w.TaintToleration, true, true, nodes,
		func(ni *NodeInfo) int64 {
			return countIntolerablePreferNoSchedule(ni.Node.Spec.Taints, ps.pod.Spec.Tolerations)
		})
	return total
}

// addNormalized adds weight * normalized(raw) to total. When the plugin
// cannot vary (inactive, or every raw score 0) the normalized score is a
// constant and no per-node slice is allocated.
func addNormalized(total []int64, weight int64, active, reverse bool, nodes []*NodeInfo, raw func(*NodeInfo) int64) {
	if weight == 0 || !active {
		return
	}
	var s []int64
	for i, ni := range nodes {
		if v := raw(ni); v != 0 && s == nil {
			s = make([]int64, len(nodes))
			s[i] = v
		} else if s != nil {
			s[i] = v
		}
	}
	if s == nil {
		if reverse {
			for i := range total {
				total[i] += weight * MaxNodeScore
			}
		}
		return
	}
	normalize(s, reverse)
	for i := range total {
		total[i] += weight * s[i]
	}
}

// selectHost returns the index of a highest score: the first one, or a
// uniformly random one (reservoir sampling) when r is set.
func selectHost(scores []int64, r *rand.Rand) int {
	best, ties := 0, 1
	for i := 1; i < len(scores); i++ {
		switch {
		case scores[i] > scores[best]:
			best, ties = i, 1
		case scores[i] == scores[best] && r != nil:
			ties++
			if r.IntN(ties) == 0 {
				best = i
			}
		}
	}
	return best
}
