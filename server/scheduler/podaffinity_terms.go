package scheduler

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// affinityTerm is a parsed PodAffinityTerm: which pods (namespaces and
// label selector) it selects and over which topology key.
type affinityTerm struct {
	topologyKey string
	namespaces  map[string]struct{}
	nsSelector  labels.Selector // nil: only the namespaces listed
	selector    labels.Selector
	weight      int64
}

// newAffinityTerm parses t for a pod in namespace ns. As upstream, a nil
// labelSelector matches no pod, an empty one every pod; no namespaces and
// no namespaceSelector mean the pod's own namespace; an empty
// namespaceSelector means every namespace.
func newAffinityTerm(ns string, t *corev1.PodAffinityTerm, weight int64) affinityTerm {
	at := affinityTerm{topologyKey: t.TopologyKey, weight: weight, namespaces: map[string]struct{}{}}
	at.selector = selectorOrNothing(t.LabelSelector)
	for _, n := range t.Namespaces {
		at.namespaces[n] = struct{}{}
	}
	if t.NamespaceSelector != nil {
		at.nsSelector = selectorOrNothing(t.NamespaceSelector)
	}
	if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
		at.namespaces[ns] = struct{}{}
	}
	return at
}

// selectorOrNothing converts ls; nil or invalid selectors match nothing.
func selectorOrNothing(ls *metav1.LabelSelector) labels.Selector {
	if ls == nil {
		return labels.Nothing()
	}
	s, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return labels.Nothing()
	}
	return s
}

// matches reports whether pod is selected by the term; nsLabels are the
// labels of the pod's namespace.
func (t *affinityTerm) matches(pod *corev1.Pod, nsLabels map[string]string) bool {
	_, inNS := t.namespaces[pod.Namespace]
	if !inNS && (t.nsSelector == nil || !t.nsSelector.Matches(labels.Set(nsLabels))) {
		return false
	}
	return t.selector.Matches(labels.Set(pod.Labels))
}

// podTerms are a pod's parsed affinity terms.
type podTerms struct {
	required, requiredAnti   []affinityTerm
	preferred, preferredAnti []affinityTerm
}

func parsePodTerms(pod *corev1.Pod) podTerms {
	var pt podTerms
	a := pod.Spec.Affinity
	if a == nil {
		return pt
	}
	if pa := a.PodAffinity; pa != nil {
		pt.required = parseRequired(pod.Namespace, pa.RequiredDuringSchedulingIgnoredDuringExecution)
		pt.preferred = parsePreferred(pod.Namespace, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if paa := a.PodAntiAffinity; paa != nil {
		pt.requiredAnti = parseRequired(pod.Namespace, paa.RequiredDuringSchedulingIgnoredDuringExecution)
		pt.preferredAnti = parsePreferred(pod.Namespace, paa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return pt
}

func parseRequired(ns string, terms []corev1.PodAffinityTerm) []affinityTerm {
	out := make([]affinityTerm, 0, len(terms))
	for i := range terms {
		out = append(out, newAffinityTerm(ns, &terms[i], 1))
	}
	return out
}

func parsePreferred(ns string, terms []corev1.WeightedPodAffinityTerm) []affinityTerm {
	out := make([]affinityTerm, 0, len(terms))
	for i := range terms {
		if terms[i].Weight == 0 {
			continue
		}
		out = append(out, newAffinityTerm(ns, &terms[i].PodAffinityTerm, int64(terms[i].Weight)))
	}
	return out
}

func (pt *podTerms) empty() bool {
	return len(pt.required)+len(pt.requiredAnti)+len(pt.preferred)+len(pt.preferredAnti) == 0
}

// placedPod is a pod with pod (anti-)affinity on a node, terms parsed once.
type placedPod struct {
	pod   *corev1.Pod
	node  *NodeInfo
	terms podTerms
}

func newPlacedPod(pod *corev1.Pod, ni *NodeInfo) *placedPod {
	return &placedPod{pod: pod, node: ni, terms: parsePodTerms(pod)}
}

// hasPodAffinity reports whether pod has any pod affinity or anti-affinity.
func hasPodAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}
