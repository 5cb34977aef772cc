package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// defaultTolerationSeconds is the DefaultTolerationSeconds admission
// plugin's default (--default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds).
const defaultTolerationSeconds = 300

// addDefaultTolerations is the DefaultTolerationSeconds admission plugin:
// on create, a pod that does not already tolerate the not-ready or
// unreachable NoExecute taint gets a toleration of 300s for it, so its pods
// are evicted five minutes after its node fails.
func addDefaultTolerations(spec *corev1.PodSpec) {
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		if toleratesNoExecute(spec.Tolerations, key) {
			continue
		}
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](defaultTolerationSeconds)})
	}
}

// toleratesNoExecute reports whether a toleration already covers key's
// NoExecute taint (upstream checks key and effect, empty matching all).
func toleratesNoExecute(tols []corev1.Toleration, key string) bool {
	for _, t := range tols {
		if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
			return true
		}
	}
	return false
}
