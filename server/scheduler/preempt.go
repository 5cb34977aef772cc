package scheduler

import (
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Preemption messages, as upstream's DefaultPreemption words them.
const (
	MsgPreemptionNever         = "not eligible due to preemptionPolicy=Never."
	MsgPreemptionTerminating   = "not eligible due to a terminating pod on the nominated node."
	ReasonPreemptionNotHelpful = "Preemption is not helpful for scheduling"
	ReasonNoVictims            = "No preemption victims found for incoming pod"
)

// unresolvable are the filter reasons preemption cannot fix (upstream's
// UnschedulableAndUnresolvable statuses): such nodes are not candidates.
var unresolvable = map[string]bool{
	ReasonNodeName: true, ReasonUnschedulable: true, ReasonUntoleratedTaint: true, ReasonNodeAffinity: true,
	ReasonVolumeNodeConflict: true, ReasonVolumeBindConflict: true, ReasonPVNotExist: true,
	ReasonSpreadMissingLabel: true, ReasonPodAffinity: true,
}

// PDB is what preemption needs of a PodDisruptionBudget.
type PDB struct {
	Namespace          string
	Selector           labels.Selector
	DisruptionsAllowed int32
	// DisruptedPods names pods already counted as disrupted.
	DisruptedPods map[string]metav1.Time
}

// Preemption is DefaultPreemption's decision: evict Victims from Node,
// then the pod fits there.
type Preemption struct {
	Node    string
	Victims []*corev1.Pod
	// PDBViolations is how many victims break a PodDisruptionBudget.
	PDBViolations int
}

// PodPriority is spec.priority, 0 when unset.
func PodPriority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// Preempt is upstream's DefaultPreemption PostFilter for a pod that got
// fe from Schedule: it returns the best candidate or nil, and always sets
// fe.PostFilterMsg ("preemption: ..."). pdbs may be nil.
func Preempt(pod *corev1.Pod, snap *Snapshot, fe *FitError, pdbs []PDB) *Preemption {
	if msg := preemptionIneligible(pod, snap); msg != "" {
		fe.PostFilterMsg = "preemption: " + msg
		return nil
	}
	if fe.PreFilterMsg != "" {
		fe.PostFilterMsg = "preemption: " + notHelpful(len(snap.Nodes))
		return nil
	}
	ps := newPodState(pod)
	ps.prepare(snap)
	reasons := map[string][]string{}
	var cands []*Preemption
	limit := max(len(snap.Nodes)/10, 100)
	for i, ni := range snap.Nodes {
		if len(cands) >= limit || !resolvable(fe.NodeReasons[ni.Node.Name]) {
			continue
		}
		if c := selectVictims(ps, snap, i, pdbs); c != nil {
			cands = append(cands, c)
		} else {
			reasons[ni.Node.Name] = []string{ReasonNoVictims}
		}
	}
	if len(cands) == 0 {
		e := &FitError{NumAllNodes: len(snap.Nodes), NodeReasons: reasons}
		for _, ni := range snap.Nodes {
			if _, ok := reasons[ni.Node.Name]; !ok {
				reasons[ni.Node.Name] = []string{ReasonPreemptionNotHelpful}
			}
		}
		fe.PostFilterMsg = "preemption: " + e.Error()
		return nil
	}
	best := pickCandidate(cands)
	fe.PostFilterMsg = fmt.Sprintf("preemption: found a potential placement for pod on node %s, preempting %d victims", best.Node, len(best.Victims))
	return best
}

func notHelpful(n int) string {
	return fmt.Sprintf("0/%d nodes are available: %d %s.", n, n, ReasonPreemptionNotHelpful)
}

func resolvable(reasons []string) bool {
	for _, r := range reasons {
		if unresolvable[r] {
			return false
		}
	}
	return true
}

// preemptionIneligible is upstream's PodEligibleToPreemptOthers.
func preemptionIneligible(pod *corev1.Pod, snap *Snapshot) string {
	if p := pod.Spec.PreemptionPolicy; p != nil && *p == corev1.PreemptNever {
		return MsgPreemptionNever
	}
	if ni := snap.NodeInfo(pod.Status.NominatedNodeName); ni != nil {
		prio := PodPriority(pod)
		for _, p := range ni.Pods {
			if p.DeletionTimestamp != nil && PodPriority(p) < prio {
				return MsgPreemptionTerminating
			}
		}
	}
	return ""
}

// selectVictims is upstream's SelectVictimsOnNode for snap.Nodes[idx]:
// remove every lower-priority pod, check the pod fits, then reprieve as
// many as possible (PDB-violating ones first), most important first.
func selectVictims(ps *podState, snap *Snapshot, idx int, pdbs []PDB) *Preemption {
	ni := snap.Nodes[idx]
	prio := PodPriority(ps.pod)
	var keep, potential []*corev1.Pod
	for _, p := range ni.Pods {
		if PodPriority(p) < prio {
			potential = append(potential, p)
		} else {
			keep = append(keep, p)
		}
	}
	if len(potential) == 0 || !fitsWith(ps, snap, idx, keep) {
		return nil
	}
	slices.SortStableFunc(potential, moreImportant)
	violating, ok := splitByPDB(potential, pdbs)
	c := &Preemption{Node: ni.Node.Name}
	reprieve := func(p *corev1.Pod, violates bool) {
		if fitsWith(ps, snap, idx, append(keep, p)) {
			keep = append(keep, p)
			return
		}
		c.Victims = append(c.Victims, p)
		if violates {
			c.PDBViolations++
		}
	}
	for _, p := range violating {
		reprieve(p, true)
	}
	for _, p := range ok {
		reprieve(p, false)
	}
	if len(c.Victims) == 0 {
		return nil
	}
	slices.SortStableFunc(c.Victims, moreImportant)
	return c
}

// fitsWith runs the filters for the pod on node idx holding only pods,
// recomputing the cluster-wide state when the pod needs it.
func fitsWith(ps *podState, snap *Snapshot, idx int, pods []*corev1.Pod) bool {
	ni := newNodeInfo(snap.Nodes[idx].Node)
	for _, p := range pods {
		ni.addPod(p)
	}
	if ps.spread != nil || ps.affinity != nil {
		view := *snap
		view.Nodes = slices.Clone(snap.Nodes)
		view.Nodes[idx] = ni
		view.affinityPods = max(snap.affinityPods, 1)
		ps.refresh(&view)
		defer ps.refresh(snap)
	}
	return len(runFilters(ps, ni, nil)) == 0
}

// moreImportant orders by priority (higher first), then start time
// (earlier first), as upstream's MoreImportantPod.
func moreImportant(a, b *corev1.Pod) int {
	pa, pb := PodPriority(a), PodPriority(b)
	if pa != pb {
		return int(pb) - int(pa)
	}
	return startTime(a).Compare(startTime(b).Time)
}

func startTime(p *corev1.Pod) metav1.Time {
	if p.Status.StartTime != nil {
		return *p.Status.StartTime
	}
	return p.CreationTimestamp
}

// splitByPDB is upstream's filterPodsWithPDBViolation.
func splitByPDB(pods []*corev1.Pod, pdbs []PDB) (violating, ok []*corev1.Pod) {
	allowed := make([]int32, len(pdbs))
	for i := range pdbs {
		allowed[i] = pdbs[i].DisruptionsAllowed
	}
	for _, p := range pods {
		v := false
		for i := range pdbs {
			b := &pdbs[i]
			if len(p.Labels) == 0 || b.Namespace != p.Namespace || b.Selector == nil || b.Selector.Empty() ||
				!b.Selector.Matches(labels.Set(p.Labels)) {
				continue
			}
			if _, done := b.DisruptedPods[p.Name]; done {
				continue
			}
			allowed[i]--
			if allowed[i] < 0 {
				v = true
			}
		}
		if v {
			violating = append(violating, p)
		} else {
			ok = append(ok, p)
		}
	}
	return violating, ok
}

// pickCandidate is upstream's pickOneNodeForPreemption: fewest PDB
// violations, lowest top victim priority, lowest priority sum, fewest
// victims, latest start of the top-priority victims, then the first.
func pickCandidate(cands []*Preemption) *Preemption {
	scores := []func(*Preemption) int64{
		func(c *Preemption) int64 { return -int64(c.PDBViolations) },
		func(c *Preemption) int64 { return -int64(PodPriority(c.Victims[0])) },
		func(c *Preemption) int64 {
			var sum int64
			for _, v := range c.Victims {
				sum += int64(PodPriority(v)) + math.MaxInt32 + 1
			}
			return -sum
		},
		func(c *Preemption) int64 { return -int64(len(c.Victims)) },
		earliestTopStart,
	}
	for _, f := range scores {
		best := int64(math.MinInt64)
		var next []*Preemption
		for _, c := range cands {
			switch s := f(c); {
			case s > best:
				best, next = s, []*Preemption{c}
			case s == best:
				next = append(next, c)
			}
		}
		if cands = next; len(cands) == 1 {
			break
		}
	}
	return cands[0]
}

// earliestTopStart is the earliest start time (unix nanos) among the
// victims of the highest priority: later is better.
func earliestTopStart(c *Preemption) int64 {
	top := PodPriority(c.Victims[0])
	earliest := int64(math.MaxInt64)
	for _, v := range c.Victims {
		if PodPriority(v) == top {
			earliest = min(earliest, startTime(v).UnixNano())
		}
	}
	return earliest
}
