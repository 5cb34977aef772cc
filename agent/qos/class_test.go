package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestClass(t *testing.T) {
	g := rl("500m", "64Mi")
	withStatus := pod(nil, ctr("a", nil, nil))
	withStatus.Status.QOSClass = corev1.PodQOSGuaranteed
	podLevel := pod(nil, ctr("a", nil, nil))
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Limits: g, Requests: g}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want corev1.PodQOSClass
	}{
		{"no containers", pod(nil), corev1.PodQOSBestEffort},
		{"nothing set", pod(nil, ctr("a", nil, nil), ctr("b", nil, nil)), corev1.PodQOSBestEffort},
		{"empty lists", pod(nil, ctr("a", corev1.ResourceList{}, corev1.ResourceList{})), corev1.PodQOSBestEffort},
		{"limits equal requests", pod(nil, ctr("a", g, g)), corev1.PodQOSGuaranteed},
		{"equal in value, other format", pod(nil, ctr("a", rl("0.5", "67108864"), g)), corev1.PodQOSGuaranteed},
		{"all guaranteed incl init", pod([]corev1.Container{ctr("i", g, g)}, ctr("a", g, g)), corev1.PodQOSGuaranteed},
		{"init besteffort, app guaranteed", pod([]corev1.Container{ctr("i", nil, nil)}, ctr("a", g, g)), corev1.PodQOSBurstable},
		{"sidecar burstable", pod([]corev1.Container{sidecar("s", rl("100m", ""), nil)}, ctr("a", g, g)), corev1.PodQOSBurstable},
		{"limits only (not defaulted)", pod(nil, ctr("a", nil, g)), corev1.PodQOSBurstable},
		{"cpu only guaranteed", pod(nil, ctr("a", rl("1", ""), rl("1", ""))), corev1.PodQOSBurstable},
		{"requests below limits", pod(nil, ctr("a", rl("100m", "32Mi"), g)), corev1.PodQOSBurstable},
		{"one be one guaranteed", pod(nil, ctr("a", g, g), ctr("b", nil, nil)), corev1.PodQOSBurstable},
		{"requests only", pod(nil, ctr("a", rl("100m", ""), nil)), corev1.PodQOSBurstable},
		{"zero requests and limits", pod(nil, ctr("a", rl("0", "0"), rl("0", "0"))), corev1.PodQOSBestEffort},
		{"other resource only (upstream: BestEffort)", pod(nil, ctr("a", corev1.ResourceList{corev1.ResourceEphemeralStorage: g[corev1.ResourceMemory]}, nil)), corev1.PodQOSBestEffort},
		{"status wins", withStatus, corev1.PodQOSGuaranteed},
		{"pod-level resources ignored", podLevel, corev1.PodQOSBestEffort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Class(tt.pod); got != tt.want {
				t.Errorf("Class = %s, want %s", got, tt.want)
			}
		})
	}
}
