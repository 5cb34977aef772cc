package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// InterPodAffinity reasons, as upstream's interpodaffinity plugin words them.
const (
	ReasonPodAffinity          = "node(s) didn't match pod affinity rules"
	ReasonPodAntiAffinity      = "node(s) didn't match pod anti-affinity rules"
	ReasonExistingAntiAffinity = "node(s) didn't satisfy existing pods anti-affinity rules"
)

// HardPodAffinityWeight is the score an existing pod's required affinity
// term matching the incoming pod adds (upstream's default).
const HardPodAffinityWeight int64 = 1

type topologyPair struct{ key, value string }

// affinityState is InterPodAffinity's PreFilter state for one pod.
type affinityState struct {
	terms          podTerms
	existingAnti   map[topologyPair]int // topologies existing pods' anti-affinity forbids
	affinityCounts map[topologyPair]int // pods matching all required terms
	antiCounts     map[topologyPair]int // pods matching a required anti term
}

// newAffinityState computes the filter state; nil when nothing to check.
func newAffinityState(pod *corev1.Pod, terms *podTerms, snap *Snapshot) *affinityState {
	if snap.affinityPods == 0 && len(terms.required) == 0 && len(terms.requiredAnti) == 0 {
		return nil
	}
	s := &affinityState{terms: *terms, existingAnti: map[topologyPair]int{},
		affinityCounts: map[topologyPair]int{}, antiCounts: map[topologyPair]int{}}
	podNS := snap.NamespaceLabels[pod.Namespace]
	for _, ni := range snap.Nodes {
		for _, pp := range ni.withAffinity {
			for i := range pp.terms.requiredAnti {
				t := &pp.terms.requiredAnti[i]
				if v, ok := ni.Node.Labels[t.topologyKey]; ok && t.matches(pod, podNS) {
					s.existingAnti[topologyPair{t.topologyKey, v}]++
				}
			}
		}
		if len(terms.required) > 0 || len(terms.requiredAnti) > 0 {
			s.countExisting(ni, snap.NamespaceLabels)
		}
	}
	return s
}

// countExisting counts the node's pods against the incoming pod's terms.
func (s *affinityState) countExisting(ni *NodeInfo, nsLabels map[string]map[string]string) {
	for _, p := range ni.Pods {
		ls := nsLabels[p.Namespace]
		if len(s.terms.required) > 0 && matchesAll(s.terms.required, p, ls) {
			for i := range s.terms.required {
				if v, ok := ni.Node.Labels[s.terms.required[i].topologyKey]; ok {
					s.affinityCounts[topologyPair{s.terms.required[i].topologyKey, v}]++
				}
			}
		}
		for i := range s.terms.requiredAnti {
			t := &s.terms.requiredAnti[i]
			if v, ok := ni.Node.Labels[t.topologyKey]; ok && t.matches(p, ls) {
				s.antiCounts[topologyPair{t.topologyKey, v}]++
			}
		}
	}
}

func matchesAll(terms []affinityTerm, pod *corev1.Pod, nsLabels map[string]string) bool {
	for i := range terms {
		if !terms[i].matches(pod, nsLabels) {
			return false
		}
	}
	return true
}

// filterInterPodAffinity checks, in upstream's order, the pod's required
// affinity, its required anti-affinity and existing pods' anti-affinity.
func filterInterPodAffinity(ps *podState, ni *NodeInfo, out []string) []string {
	s := ps.affinity
	if s == nil {
		return out
	}
	if !s.satisfiesAffinity(ps, ni) {
		return append(out, ReasonPodAffinity)
	}
	for i := range s.terms.requiredAnti {
		t := &s.terms.requiredAnti[i]
		if v, ok := ni.Node.Labels[t.topologyKey]; ok && s.antiCounts[topologyPair{t.topologyKey, v}] > 0 {
			return append(out, ReasonPodAntiAffinity)
		}
	}
	for tp := range s.existingAnti {
		if v, ok := ni.Node.Labels[tp.key]; ok && v == tp.value {
			return append(out, ReasonExistingAntiAffinity)
		}
	}
	return out
}

// satisfiesAffinity is upstream's satisfyPodAffinity, including the
// exception for the first pod of a group with affinity to itself.
func (s *affinityState) satisfiesAffinity(ps *podState, ni *NodeInfo) bool {
	podsExist := true
	for i := range s.terms.required {
		v, ok := ni.Node.Labels[s.terms.required[i].topologyKey]
		if !ok {
			return false
		}
		if s.affinityCounts[topologyPair{s.terms.required[i].topologyKey, v}] <= 0 {
			podsExist = false
		}
	}
	if podsExist {
		return true
	}
	return len(s.affinityCounts) == 0 && matchesAll(s.terms.required, ps.pod, ps.nsLabels)
}

// interPodAffinityScores returns the raw per-node scores (upstream's
// PreScore + Score) or nil when the plugin has nothing to score.
func interPodAffinityScores(ps *podState, snap *Snapshot, nodes []*NodeInfo) []int64 {
	terms := ps.terms()
	hasPreferred := len(terms.preferred)+len(terms.preferredAnti) > 0
	if !hasPreferred && snap.affinityPods == 0 {
		return nil
	}
	topo := map[topologyPair]int64{}
	for _, ni := range snap.Nodes {
		if len(ni.Node.Labels) == 0 {
			continue
		}
		if hasPreferred {
			for _, p := range ni.Pods {
				addIncomingTerms(topo, terms, p, ni, snap.NamespaceLabels[p.Namespace])
			}
		}
		for _, pp := range ni.withAffinity {
			addExistingTerms(topo, pp, ps)
		}
	}
	if len(topo) == 0 {
		return nil
	}
	scores := make([]int64, len(nodes))
	for i, ni := range nodes {
		for tp, w := range topo {
			if v, ok := ni.Node.Labels[tp.key]; ok && v == tp.value {
				scores[i] += w
			}
		}
	}
	return scores
}

func addTerm(topo map[topologyPair]int64, t *affinityTerm, weight int64, pod *corev1.Pod, nsLabels map[string]string, ni *NodeInfo) {
	if v, ok := ni.Node.Labels[t.topologyKey]; ok && t.matches(pod, nsLabels) {
		topo[topologyPair{t.topologyKey, v}] += weight
	}
}

// addIncomingTerms scores the incoming pod's preferred terms against p.
func addIncomingTerms(topo map[topologyPair]int64, terms *podTerms, p *corev1.Pod, ni *NodeInfo, nsLabels map[string]string) {
	for i := range terms.preferred {
		addTerm(topo, &terms.preferred[i], terms.preferred[i].weight, p, nsLabels, ni)
	}
	for i := range terms.preferredAnti {
		addTerm(topo, &terms.preferredAnti[i], -terms.preferredAnti[i].weight, p, nsLabels, ni)
	}
}

// addExistingTerms scores an existing pod's terms against the incoming pod.
func addExistingTerms(topo map[topologyPair]int64, pp *placedPod, ps *podState) {
	for i := range pp.terms.required {
		addTerm(topo, &pp.terms.required[i], HardPodAffinityWeight, ps.pod, ps.nsLabels, pp.node)
	}
	for i := range pp.terms.preferred {
		addTerm(topo, &pp.terms.preferred[i], pp.terms.preferred[i].weight, ps.pod, ps.nsLabels, pp.node)
	}
	for i := range pp.terms.preferredAnti {
		addTerm(topo, &pp.terms.preferredAnti[i], -pp.terms.preferredAnti[i].weight, ps.pod, ps.nsLabels, pp.node)
	}
}

// normalizeMinMax is InterPodAffinity's NormalizeScore.
func normalizeMinMax(scores []int64) {
	minv, maxv := int64(math.MaxInt64), int64(math.MinInt64)
	for _, s := range scores {
		minv, maxv = min(minv, s), max(maxv, s)
	}
	diff := maxv - minv
	for i, s := range scores {
		if diff > 0 {
			scores[i] = int64(float64(MaxNodeScore) * float64(s-minv) / float64(diff))
		} else {
			scores[i] = 0
		}
	}
}
