package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PodTopologySpread reasons, as upstream's podtopologyspread plugin words them.
const (
	ReasonSpread             = "node(s) didn't match pod topology spread constraints"
	ReasonSpreadMissingLabel = ReasonSpread + " (missing required label)"
)

// Well-known topology keys of the system default constraints.
const (
	LabelHostname = corev1.LabelHostname
	LabelZone     = corev1.LabelTopologyZone
)

// SystemDefaultSpread are kube-scheduler's system default constraints,
// applied (as ScheduleAnyway) to pods without constraints of their own
// that a Service, ReplicaSet or StatefulSet selects.
func SystemDefaultSpread() []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{
		{MaxSkew: 3, TopologyKey: LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway},
		{MaxSkew: 5, TopologyKey: LabelZone, WhenUnsatisfiable: corev1.ScheduleAnyway},
	}
}

// spreadConstraint is a parsed TopologySpreadConstraint.
type spreadConstraint struct {
	maxSkew        int32
	key            string
	selector       labels.Selector
	minDomains     int32
	affinityPolicy corev1.NodeInclusionPolicy
	taintsPolicy   corev1.NodeInclusionPolicy
}

// parseSpread returns the pod's constraints with the given action, the
// selector extended by matchLabelKeys and policies defaulted as upstream.
func parseSpread(pod *corev1.Pod, cs []corev1.TopologySpreadConstraint, action corev1.UnsatisfiableConstraintAction) []spreadConstraint {
	var out []spreadConstraint
	for _, c := range cs {
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			sel = labels.Nothing()
		}
		for _, k := range c.MatchLabelKeys {
			if v, ok := pod.Labels[k]; ok {
				if r, err := labels.NewRequirement(k, "=", []string{v}); err == nil {
					sel = sel.Add(*r)
				}
			}
		}
		sc := spreadConstraint{maxSkew: c.MaxSkew, key: c.TopologyKey, selector: sel, minDomains: 1,
			affinityPolicy: corev1.NodeInclusionPolicyHonor, taintsPolicy: corev1.NodeInclusionPolicyIgnore}
		if c.MinDomains != nil {
			sc.minDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			sc.affinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			sc.taintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, sc)
	}
	return out
}

// includes is upstream's matchNodeInclusionPolicies.
func (c *spreadConstraint) includes(pod *corev1.Pod, node *corev1.Node) bool {
	if c.affinityPolicy == corev1.NodeInclusionPolicyHonor && !podMatchesNodeSelectorAndAffinity(pod, node) {
		return false
	}
	if c.taintsPolicy == corev1.NodeInclusionPolicyHonor &&
		firstUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute) != nil {
		return false
	}
	return true
}

func hasAllKeys(nodeLabels map[string]string, cs []spreadConstraint) bool {
	for i := range cs {
		if _, ok := nodeLabels[cs[i].key]; !ok {
			return false
		}
	}
	return true
}

// countMatching counts the node's non-terminating pods in ns that sel selects.
func countMatching(ni *NodeInfo, sel labels.Selector, ns string) int {
	if sel.Empty() {
		return 0
	}
	n := 0
	for _, p := range ni.Pods {
		if p.DeletionTimestamp == nil && p.Namespace == ns && sel.Matches(labels.Set(p.Labels)) {
			n++
		}
	}
	return n
}

// spreadState is PodTopologySpread's PreFilter state: matching pods per
// domain of each DoNotSchedule constraint and the global minimum.
type spreadState struct {
	constraints []spreadConstraint
	counts      []map[string]int
	minMatch    []int
}

// newSpreadState is upstream's calPreFilterState; nil when the pod has no
// DoNotSchedule constraint.
func newSpreadState(pod *corev1.Pod, snap *Snapshot) *spreadState {
	cs := parseSpread(pod, pod.Spec.TopologySpreadConstraints, corev1.DoNotSchedule)
	if len(cs) == 0 {
		return nil
	}
	s := &spreadState{constraints: cs, counts: make([]map[string]int, len(cs)), minMatch: make([]int, len(cs))}
	for i := range cs {
		s.counts[i] = map[string]int{}
	}
	for _, ni := range snap.Nodes {
		if !hasAllKeys(ni.Node.Labels, cs) {
			continue
		}
		for i := range cs {
			if cs[i].includes(pod, ni.Node) {
				s.counts[i][ni.Node.Labels[cs[i].key]] += countMatching(ni, cs[i].selector, pod.Namespace)
			}
		}
	}
	for i := range cs {
		m := math.MaxInt32
		for _, n := range s.counts[i] {
			m = min(m, n)
		}
		if len(s.counts[i]) < int(cs[i].minDomains) {
			m = 0
		}
		s.minMatch[i] = m
	}
	return s
}

func filterPodTopologySpread(ps *podState, ni *NodeInfo, out []string) []string {
	s := ps.spread
	if s == nil {
		return out
	}
	podLabels := labels.Set(ps.pod.Labels)
	for i := range s.constraints {
		c := &s.constraints[i]
		v, ok := ni.Node.Labels[c.key]
		if !ok {
			return append(out, ReasonSpreadMissingLabel)
		}
		self := 0
		if c.selector.Matches(podLabels) {
			self = 1
		}
		if s.counts[i][v]+self-s.minMatch[i] > int(c.maxSkew) {
			return append(out, ReasonSpread)
		}
	}
	return out
}
