package daemonset

import (
	"maps"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/server/controllers/history"
)

// generationKey is where apps/v1 keeps a DaemonSet's template generation.
const generationKey = "deprecated.daemonset.template.generation"

// templateGenerationLabel is the pod label upstream calls DaemonSetTemplateGenerationKey.
const templateGenerationLabel = "pod-template-generation"

// podSpec is the template's spec with the default tolerations: what
// eligibility is judged on.
func podSpec(ds *appsv1.DaemonSet) *corev1.PodSpec {
	spec := ds.Spec.Template.Spec.DeepCopy()
	addTolerations(spec)
	return spec
}

// newPod builds the daemon pod for node (upstream's NewPod plus
// ReplaceDaemonSetPodNodeNameNodeAffinity and the hash labels).
func newPod(ds *appsv1.DaemonSet, node, hash string) *corev1.Pod {
	tpl := ds.Spec.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: tpl.ObjectMeta, Spec: tpl.Spec}
	pod.Name = ""
	pod.GenerateName = ds.Name + "-"
	pod.Namespace = ds.Namespace
	pod.Labels = maps.Clone(tpl.Labels)
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[history.HashLabel] = hash
	if g := ds.Annotations[generationKey]; g != "" {
		pod.Labels[templateGenerationLabel] = g
	}
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(ds, Kind)}
	pod.Spec.Affinity = pinToNode(pod.Spec.Affinity, node)
	addTolerations(&pod.Spec)
	return pod
}

// pinToNode replaces the required node affinity with
// `matchFields metadata.name In [node]`, keeping preferred terms.
func pinToNode(aff *corev1.Affinity, node string) *corev1.Affinity {
	req := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{
			Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
	}}}
	if aff == nil {
		aff = &corev1.Affinity{}
	}
	if aff.NodeAffinity == nil {
		aff.NodeAffinity = &corev1.NodeAffinity{}
	}
	aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = req
	return aff
}

// targetNode is the node a daemon pod is on or pinned to.
func targetNode(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
				return r.Values[0]
			}
		}
	}
	return ""
}

// isUpdated: the pod carries the current hash or template generation.
func isUpdated(pod *corev1.Pod, hash, generation string) bool {
	if generation != "" && pod.Labels[templateGenerationLabel] == generation {
		return true
	}
	return hash != "" && pod.Labels[history.HashLabel] == hash
}

func readySince(pod *corev1.Pod) (time.Time, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.Time, c.Status == corev1.ConditionTrue
		}
	}
	return time.Time{}, false
}

func isReady(pod *corev1.Pod) bool {
	_, ok := readySince(pod)
	return ok
}

// isAvailable: ready for at least minReady seconds.
func isAvailable(pod *corev1.Pod, minReady int32, now time.Time) bool {
	since, ok := readySince(pod)
	if !ok {
		return false
	}
	return minReady == 0 || (!since.IsZero() && !since.Add(time.Duration(minReady)*time.Second).After(now))
}

// byAge sorts pods oldest first, running before pending on ties
// (upstream's podByCreationTimestampAndPhase).
func byAge(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		if (a.Spec.NodeName != "") != (b.Spec.NodeName != "") {
			return a.Spec.NodeName != ""
		}
		return a.Name < b.Name
	})
}
