package autoscaling

import (
	"fmt"
	"slices"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

// Group is autoscaling (v2, then v1) for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: "autoscaling", Resources: resources, AddToScheme: func(s *runtime.Scheme) error {
		if err := autoscalingv2.AddToScheme(s); err != nil {
			return err
		}
		if err := autoscalingv1.AddToScheme(s); err != nil {
			return err
		}
		return addConversions(s)
	}}
}

func hpa(o runtime.Object) *autoscalingv2.HorizontalPodAutoscaler {
	return o.(*autoscalingv2.HorizontalPodAutoscaler)
}

func resources(registry.Config) []*registry.Resource {
	d := registry.Def{GroupVersion: autoscalingv2.SchemeGroupVersion, Resource: "horizontalpodautoscalers",
		Kind: "HorizontalPodAutoscaler", ShortNames: []string{"hpa"}, Categories: []string{"all"}, Namespaced: true, HasStatus: true,
		New:     registry.NewObjects[autoscalingv2.HorizontalPodAutoscaler](),
		NewList: registry.NewObjects[autoscalingv2.HorizontalPodAutoscalerList](),
		Hooks: registry.Hooks{
			Defaults:       func(o runtime.Object) { Default(hpa(o)) },
			Validate:       func(o runtime.Object) field.ErrorList { return Validate(hpa(o)) },
			ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return Validate(hpa(o)) },
			Columns: []metav1.TableColumnDefinition{
				registry.Col("Reference", "string", 0, "Reference to the scaled object"),
				registry.Col("Targets", "string", 0, "Current and target metric values"),
				registry.Col("MinPods", "string", 0, "Lower limit for the number of pods"),
				registry.Col("MaxPods", "integer", 0, "Upper limit for the number of pods"),
				registry.Col("Replicas", "integer", 0, "Current number of replicas"),
				registry.AgeColumn(),
			},
			Row: func(o runtime.Object) []interface{} {
				h := hpa(o)
				minPods := "<unset>"
				if h.Spec.MinReplicas != nil {
					minPods = fmt.Sprint(*h.Spec.MinReplicas)
				}
				return []interface{}{h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name, targets(h), minPods,
					int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), registry.Age(o)}
			},
		}}
	return registry.BuildAll(d, v1Def(d))
}

// Default applies upstream's v2 defaults: one replica at least, CPU at
// 80 % utilization when no metric is given, and the behavior defaults.
func Default(h *autoscalingv2.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = ptr.To(int32(1))
	}
	if len(h.Spec.Metrics) == 0 {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(80))}}}}
	}
	DefaultBehavior(h)
}

var metricTypes = []string{"ContainerResource", "External", "Object", "Pods", "Resource"}

// Validate checks what users meet of upstream's HPA validation.
func Validate(h *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	ref := sp.Child("scaleTargetRef")
	if h.Spec.ScaleTargetRef.Kind == "" {
		errs = append(errs, field.Required(ref.Child("kind"), ""))
	}
	if h.Spec.ScaleTargetRef.Name == "" {
		errs = append(errs, field.Required(ref.Child("name"), ""))
	}
	min := ptr.Deref(h.Spec.MinReplicas, 1)
	if min < 1 {
		errs = append(errs, field.Invalid(sp.Child("minReplicas"), min, "must be greater than or equal to 1"))
	}
	if h.Spec.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(sp.Child("maxReplicas"), h.Spec.MaxReplicas, "must be greater than 0"))
	} else if h.Spec.MaxReplicas < min {
		errs = append(errs, field.Invalid(sp.Child("maxReplicas"), h.Spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateBehavior(h.Spec.Behavior, sp.Child("behavior"))...)
	for i, m := range h.Spec.Metrics {
		mp := sp.Child("metrics").Index(i)
		if !slices.Contains(metricTypes, string(m.Type)) {
			errs = append(errs, field.NotSupported(mp.Child("type"), m.Type, metricTypes))
		}
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource == nil {
			errs = append(errs, field.Required(mp.Child("resource"), "must populate information for the given metric source"))
		}
	}
	return errs
}
