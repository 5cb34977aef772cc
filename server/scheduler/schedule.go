package scheduler

import (
	"errors"
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
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
	// Parallelism is how many goroutines filter and score a large
	// snapshot (upstream uses 16); 0 means GOMAXPROCS, 1 none.
	Parallelism int
	// DefaultSpreadSelector, if set, turns on PodTopologySpread's system
	// default constraints: it returns the selector of the Services,
	// ReplicaSets and StatefulSets selecting the pod (empty: none).
	DefaultSpreadSelector func(*corev1.Pod) labels.Selector
}

// Result is a scheduling decision.
type Result struct {
	Node string
	// Feasible is how many nodes passed the filters.
	Feasible int
	// ClaimsToSelect are the pod's unbound WaitForFirstConsumer claims
	// ("namespace/name"): the binder sets AnnSelectedNode on each before
	// binding the pod.
	ClaimsToSelect []string
}

// Schedule picks a node for pod from snap: filter, then score. A pod that
// fits nowhere gets a *FitError (errors.Is ErrUnschedulable).
func Schedule(pod *corev1.Pod, snap *Snapshot, cfg Config) (Result, error) {
	if len(snap.Nodes) == 0 {
		return Result{}, fmt.Errorf("schedule pod %s/%s: %w", pod.Namespace, pod.Name, ErrNoNodes)
	}
	ps := newPodState(pod)
	if msg := ps.prepare(snap); msg != "" {
		return Result{}, &FitError{Pod: pod.Namespace + "/" + pod.Name, NumAllNodes: len(snap.Nodes), PreFilterMsg: msg}
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	feasible := filterNodes(ps, snap.Nodes, cfg.parallelism(len(snap.Nodes)), sc)
	if len(feasible) == 0 {
		return Result{}, newFitError(ps, snap)
	}
	res := Result{Node: feasible[0].Node.Name, Feasible: len(feasible), ClaimsToSelect: ps.volumes.claimsToSelect()}
	if len(feasible) > 1 {
		scores := scoreNodes(ps, snap, feasible, &cfg, sc)
		res.Node = feasible[selectHost(scores, cfg.Rand)].Node.Name
	}
	return res, nil
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
func scoreNodes(ps *podState, snap *Snapshot, nodes []*NodeInfo, cfg *Config, sc *scratch) []int64 {
	w := cfg.Weights
	if w == (Weights{}) {
		w = DefaultWeights()
	}
	if cap(sc.total) < len(nodes) {
		sc.total = make([]int64, len(nodes))
	}
	total := sc.total[:len(nodes)]
	parallelize(len(nodes), cfg.parallelism(len(nodes)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			total[i] = w.NodeResourcesFit*resourceFitScore(cfg.Strategy, ps, nodes[i]) +
				w.BalancedAllocation*balancedAllocationScore(ps, nodes[i])
		}
	})
	addNormalized(total, w.NodeAffinity, hasPreferredAffinity(ps.pod), false, nodes,
		func(ni *NodeInfo) int64 { return preferredAffinityScore(ps.pod, ni.Node) })
	addNormalized(total, w.TaintToleration, true, true, nodes,
		func(ni *NodeInfo) int64 {
			return countIntolerablePreferNoSchedule(ni.Node.Spec.Taints, ps.pod.Spec.Tolerations)
		})
	addScores(total, w.PodTopologySpread, podTopologySpreadScores(ps, snap, nodes, cfg))
	if s := interPodAffinityScores(ps, snap, nodes); s != nil {
		normalizeMinMax(s)
		addScores(total, w.InterPodAffinity, s)
	}
	if images := snap.imageStates(); len(images) > 0 && w.ImageLocality != 0 {
		for i, ni := range nodes {
			total[i] += w.ImageLocality * imageLocalityScore(ps.pod, ni, images, len(snap.Nodes))
		}
	}
	return total
}

// addScores adds weight * normalized scores s (nil: plugin skipped).
func addScores(total []int64, weight int64, s []int64) {
	for i := range s {
		total[i] += weight * s[i]
	}
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
