package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// MaxNodeScore is the top of every plugin's score range.
const MaxNodeScore int64 = 100

// ScoringStrategy picks how NodeResourcesFit scores.
type ScoringStrategy int

const (
	// LeastAllocated favours emptier nodes (spreads); the default.
	LeastAllocated ScoringStrategy = iota
	// MostAllocated favours fuller nodes (bin-packs).
	MostAllocated
)

// Weights of the score plugins; the zero value means the defaults of
// kube-scheduler's default profile (see DefaultWeights).
type Weights struct {
	NodeResourcesFit   int64
	BalancedAllocation int64
	NodeAffinity       int64
	TaintToleration    int64
	PodTopologySpread  int64
	InterPodAffinity   int64
	ImageLocality      int64
}

// DefaultWeights are kube-scheduler's default profile weights.
func DefaultWeights() Weights {
	return Weights{NodeResourcesFit: 1, BalancedAllocation: 1, NodeAffinity: 2, TaintToleration: 3,
		PodTopologySpread: 2, InterPodAffinity: 2, ImageLocality: 1}
}

// resourceFitScore is upstream's least/mostRequested scorer over cpu and
// memory (weight 1 each, resources with zero allocatable skipped) using
// non-zero requests.
func resourceFitScore(s ScoringStrategy, ps *podState, ni *NodeInfo) int64 {
	f := leastRequested
	if s == MostAllocated {
		f = mostRequested
	}
	var sum, n int64
	pairs := [2][2]int64{
		{ni.NonZeroRequested.MilliCPU + ps.nonZeroReq.MilliCPU, ni.Allocatable.MilliCPU},
		{ni.NonZeroRequested.Memory + ps.nonZeroReq.Memory, ni.Allocatable.Memory},
	}
	for _, p := range pairs {
		if p[1] == 0 {
			continue
		}
		sum += f(p[0], p[1])
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

func leastRequested(requested, capacity int64) int64 {
	if requested > capacity {
		return 0
	}
	return (capacity - requested) * MaxNodeScore / capacity
}

func mostRequested(requested, capacity int64) int64 {
	return min(requested, capacity) * MaxNodeScore / capacity
}

// balancedAllocationScore is upstream's (v1.37) BalancedAllocation for
// cpu and memory with real requests: the change in balance the pod
// brings, mapped to [50, 100]. Best-effort pods score 0 (plugin skipped).
func balancedAllocationScore(ps *podState, ni *NodeInfo) int64 {
	if ps.req.MilliCPU == 0 && ps.req.Memory == 0 {
		return 0
	}
	u, a := ni.Requested, ni.Allocatable
	with := balance(u.MilliCPU+ps.req.MilliCPU, a.MilliCPU, u.Memory+ps.req.Memory, a.Memory)
	without := balance(u.MilliCPU, a.MilliCPU, u.Memory, a.Memory)
	return MaxNodeScore/2 + (MaxNodeScore/2+with-without)/2
}

// balance is (1 - std deviation of the requested fractions) * 100.
func balance(cpu, cpuCap, mem, memCap int64) int64 {
	if cpuCap == 0 || memCap == 0 {
		return MaxNodeScore // fewer than two resources: std is 0
	}
	fc := min(float64(cpu)/float64(cpuCap), 1)
	fm := min(float64(mem)/float64(memCap), 1)
	return int64((1 - math.Abs(fc-fm)/2) * float64(MaxNodeScore))
}

// normalize maps raw scores to 0..MaxNodeScore by the maximum, reversed
// if asked, as upstream's helper.DefaultNormalizeScore.
func normalize(scores []int64, reverse bool) {
	var maxv int64
	for _, s := range scores {
		maxv = max(maxv, s)
	}
	for i, s := range scores {
		switch {
		case maxv == 0 && reverse:
			scores[i] = MaxNodeScore
		case maxv == 0:
			scores[i] = 0
		case reverse:
			scores[i] = MaxNodeScore - s*MaxNodeScore/maxv
		default:
			scores[i] = s * MaxNodeScore / maxv
		}
	}
}

// hasPreferredAffinity reports whether the node-affinity score can vary.
func hasPreferredAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && a.NodeAffinity != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
}
