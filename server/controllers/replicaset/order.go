package replicaset

import (
	"math"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DeletionCostAnnotation lowers (or raises) a pod's worth when a
// ReplicaSet scales down, as upstream's pod-deletion-cost.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

var phaseOrdinal = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// rankedPods sorts pods least valuable first, as upstream's
// ActivePodsWithRanks: unassigned < assigned; Pending < Unknown < Running;
// not ready < ready; lower deletion cost first; more pods of the same
// owner on its node first; ready for less time first; more restarts first;
// newer before older (times compared on a log2 scale).
type rankedPods struct {
	pods []*corev1.Pod
	rank []int
	now  time.Time
}

func (s rankedPods) Len() int { return len(s.pods) }
func (s rankedPods) Swap(i, j int) {
	s.pods[i], s.pods[j] = s.pods[j], s.pods[i]
	s.rank[i], s.rank[j] = s.rank[j], s.rank[i]
}

func (s rankedPods) Less(i, j int) bool {
	a, b := s.pods[i], s.pods[j]
	if a.Spec.NodeName != b.Spec.NodeName && (a.Spec.NodeName == "" || b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if phaseOrdinal[a.Status.Phase] != phaseOrdinal[b.Status.Phase] {
		return phaseOrdinal[a.Status.Phase] < phaseOrdinal[b.Status.Phase]
	}
	if PodReady(a) != PodReady(b) {
		return !PodReady(a)
	}
	if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
		return ca < cb
	}
	if s.rank[i] != s.rank[j] {
		return s.rank[i] > s.rank[j]
	}
	if PodReady(a) && PodReady(b) {
		if r, ok := s.newerFirst(readyTime(a), readyTime(b), a, b); ok {
			return r
		}
	}
	if ra, rb := maxRestarts(a), maxRestarts(b); ra != rb {
		return ra > rb
	}
	if r, ok := s.newerFirst(a.CreationTimestamp.Time, b.CreationTimestamp.Time, a, b); ok {
		return r
	}
	return false
}

// newerFirst orders by time, newer (or unknown) first; ok is false when
// the times are equal.
func (s rankedPods) newerFirst(ta, tb time.Time, a, b *corev1.Pod) (bool, bool) {
	if ta.Equal(tb) {
		return false, false
	}
	if s.now.IsZero() || ta.IsZero() || tb.IsZero() {
		if ta.IsZero() || tb.IsZero() {
			return ta.IsZero(), true
		}
		return ta.After(tb), true
	}
	if d := logRank(ta, s.now) - logRank(tb, s.now); d != 0 {
		return d < 0, true
	}
	return a.UID < b.UID, true
}

func logRank(t, now time.Time) int64 {
	if d := now.Sub(t); d > 0 {
		return int64(math.Log2(float64(d)))
	}
	return -1
}

func readyTime(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func maxRestarts(p *corev1.Pod) int32 {
	var m int32
	for _, c := range p.Status.ContainerStatuses {
		m = max(m, c.RestartCount)
	}
	return m
}

func deletionCost(p *corev1.Pod) int32 {
	v, err := strconv.ParseInt(p.Annotations[DeletionCostAnnotation], 10, 32)
	if err != nil {
		return 0
	}
	return int32(v)
}

// podsToDelete picks the n least valuable of pods; related are the active
// pods of every ReplicaSet with the same owner (for the same-node rank).
func podsToDelete(pods, related []*corev1.Pod, n int, now time.Time) []*corev1.Pod {
	if n >= len(pods) {
		return pods
	}
	onNode := map[string]int{}
	for _, p := range related {
		if PodActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	s := rankedPods{pods: append([]*corev1.Pod(nil), pods...), rank: make([]int, len(pods)), now: now}
	for i, p := range s.pods {
		s.rank[i] = onNode[p.Spec.NodeName]
	}
	sort.Sort(s)
	return s.pods[:n]
}

// PodActive: not Succeeded, not Failed, not being deleted.
func PodActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

// PodReady: the Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodAvailable: ready for at least minReadySeconds at now.
func PodAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	if !PodReady(p) {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	t := readyTime(p)
	return !t.IsZero() && t.Add(time.Duration(minReadySeconds)*time.Second).Before(now)
}

// nextAvailabilityCheck is how long until the first ready-but-not-yet-
// available pod becomes available, or nil.
func nextAvailabilityCheck(pods []*corev1.Pod, minReadySeconds int32, now time.Time) *time.Duration {
	if minReadySeconds <= 0 {
		return nil
	}
	var best *time.Duration
	for _, p := range pods {
		t := readyTime(p)
		if !PodReady(p) || t.IsZero() {
			continue
		}
		if d := t.Add(time.Duration(minReadySeconds) * time.Second).Sub(now); d > 0 && (best == nil || d < *best) {
			best = &d
		}
	}
	return best
}
