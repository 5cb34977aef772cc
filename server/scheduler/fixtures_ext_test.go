package scheduler

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func podLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func inNamespace(ns string) podOpt { return func(p *corev1.Pod) { p.Namespace = ns } }

func withPriority(prio int32) podOpt {
	return func(p *corev1.Pod) { p.Spec.Priority = ptr.To(prio) }
}

func spreadOn(key string, maxSkew int32, action corev1.UnsatisfiableConstraintAction, kv ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: action, LabelSelector: matchLabels(kv...)})
	}
}

func matchLabels(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func podTerm(key string, kv ...string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: matchLabels(kv...)}
}

func ensurePodAffinity(p *corev1.Pod) *corev1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	if p.Spec.Affinity.PodAffinity == nil {
		p.Spec.Affinity.PodAffinity = &corev1.PodAffinity{}
	}
	if p.Spec.Affinity.PodAntiAffinity == nil {
		p.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	return p.Spec.Affinity
}

func requiredAffinity(t corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		a := ensurePodAffinity(p).PodAffinity
		a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, t)
	}
}

func requiredAnti(t corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		a := ensurePodAffinity(p).PodAntiAffinity
		a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, t)
	}
}

func preferredAffinity(w int32, t corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		a := ensurePodAffinity(p).PodAffinity
		a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.WeightedPodAffinityTerm{Weight: w, PodAffinityTerm: t})
	}
}

func preferredAnti(w int32, t corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		a := ensurePodAffinity(p).PodAntiAffinity
		a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.WeightedPodAffinityTerm{Weight: w, PodAffinityTerm: t})
	}
}

func withClaim(name string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: name,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	}
}

// zonedNodes returns n nodes "z<zone>-<i>" spread over zones.
func zonedNodes(zones []string, perZone int, cpu, mem string) []*corev1.Node {
	var out []*corev1.Node
	for _, z := range zones {
		for i := range perZone {
			out = append(out, makeNode(z+"-"+string(rune('a'+i)), cpu, mem, withLabels(LabelZone, z)))
		}
	}
	return out
}
