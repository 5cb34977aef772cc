package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestAddDefaultTolerations(t *testing.T) {
	cases := []struct {
		name string
		tols []corev1.Toleration
		want int
	}{
		{"none", nil, 2},
		{"has not-ready", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, 2},
		{"tolerates everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, 1},
		{"NoSchedule only", []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := corev1.PodSpec{Tolerations: c.tols}
			addDefaultTolerations(&spec)
			if len(spec.Tolerations) != c.want {
				t.Fatalf("got %+v", spec.Tolerations)
			}
			for _, tol := range spec.Tolerations[len(c.tols):] {
				if tol.TolerationSeconds == nil || *tol.TolerationSeconds != 300 || tol.Effect != corev1.TaintEffectNoExecute {
					t.Fatalf("bad default toleration %+v", tol)
				}
			}
		})
	}
}
