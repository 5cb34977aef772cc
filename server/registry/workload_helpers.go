package registry

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePodTemplate is ValidatePodTemplateSpec: template labels/annotations and the pod spec.
func validatePodTemplate(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("metadata", "labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, p.Child("metadata", "annotations"))...)
	errs = append(errs, validatePodSpec(&t.Spec, p.Child("spec"))...)
	if len(t.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(p.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}

// validateAlwaysRestart is the workload rule that template pods restart Always
// and have no activeDeadlineSeconds.
func validateAlwaysRestart(t *corev1.PodTemplateSpec, kind string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("template", "spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

func validatePositiveIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		return msgs(v, p, validation.IsValidPercent(v.StrVal))
	case intstr.Int:
		return nonNegative(int64(v.IntValue()), p)
	}
	return field.ErrorList{field.Invalid(p, v, "must be an integer or percentage (e.g '5%')")}
}

func intOrPercentValue(v intstr.IntOrString) int {
	if v.Type == intstr.String {
		s := strings.TrimSuffix(v.StrVal, "%")
		n, err := intstr.GetScaledValueFromIntOrPercent(&intstr.IntOrString{Type: intstr.String, StrVal: s + "%"}, 100, false)
		if err != nil {
			return 0
		}
		return n
	}
	return v.IntValue()
}

func notMoreThan100Percent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	if v.Type == intstr.String && intOrPercentValue(v) > 100 {
		return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
	}
	return nil
}

// containerCells is layoutContainerCells: comma-joined names and images.
func containerCells(cs []corev1.Container) (string, string) {
	names := make([]string, len(cs))
	images := make([]string, len(cs))
	for i, c := range cs {
		names[i], images[i] = c.Name, c.Image
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

func selectorString(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "<invalid>"
	}
	return sel.String()
}

func replicasOr1(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}
