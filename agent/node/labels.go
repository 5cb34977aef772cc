package node

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseLabels parses --node-label values of the form key=value.
func ParseLabels(in []string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range in {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("--node-label %q: want key=value", s)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("--node-label %q: key: %s", s, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("--node-label %q: value: %s", s, strings.Join(errs, "; "))
		}
		out[k] = v
	}
	return out, nil
}

// ParseTaints parses --node-taint values of the form key=value:Effect (the
// value may be empty: key:Effect).
func ParseTaints(in []string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	for _, s := range in {
		kv, effect, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("--node-taint %q: want key=value:Effect", s)
		}
		k, v, _ := strings.Cut(kv, "=")
		switch e := corev1.TaintEffect(effect); e {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("--node-taint %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", s, effect)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("--node-taint %q: key: %s", s, strings.Join(errs, "; "))
		}
		out = append(out, corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)})
	}
	return out, nil
}
