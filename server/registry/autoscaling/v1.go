package autoscaling

import (
	"encoding/json"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

// The annotations that carry in autoscaling/v1 what only v2 has, as
// upstream's conversion names them. orch writes them in v2's format.
const (
	metricSpecsAnnotation    = "autoscaling.alpha.kubernetes.io/metrics"
	metricStatusesAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	conditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	behaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
)

var roundTripAnnotations = []string{metricSpecsAnnotation, metricStatusesAnnotation, conditionsAnnotation, behaviorAnnotation}

func hpaV1(o runtime.Object) *autoscalingv1.HorizontalPodAutoscaler {
	return o.(*autoscalingv1.HorizontalPodAutoscaler)
}

// v1Def serves autoscaling/v1 HorizontalPodAutoscalers, stored as v2:
// v2's defaults and validation on the converted object, v2's columns.
func v1Def(v2 registry.Def) registry.Def {
	asV2 := func(o runtime.Object) *autoscalingv2.HorizontalPodAutoscaler { return ToV2(hpaV1(o)) }
	return registry.Def{GroupVersion: autoscalingv1.SchemeGroupVersion, Resource: v2.Resource, Kind: v2.Kind,
		ShortNames: v2.ShortNames, Categories: v2.Categories, Namespaced: true, HasStatus: true,
		New:     registry.NewObjects[autoscalingv1.HorizontalPodAutoscaler](),
		NewList: registry.NewObjects[autoscalingv1.HorizontalPodAutoscalerList](),
		StoredAs: &registry.StoredAs{GroupVersion: autoscalingv2.SchemeGroupVersion,
			New:         registry.NewObjects[autoscalingv2.HorizontalPodAutoscaler](),
			ToStorage:   func(o runtime.Object) (runtime.Object, error) { return ToV2(hpaV1(o)), nil },
			FromStorage: func(o runtime.Object) (runtime.Object, error) { return ToV1(hpa(o)), nil }},
		Hooks: registry.Hooks{
			Defaults: func(o runtime.Object) {
				if h := hpaV1(o); h.Spec.MinReplicas == nil {
					h.Spec.MinReplicas = ptr.To(int32(1))
				}
			},
			Validate:       func(o runtime.Object) field.ErrorList { return Validate(asV2(o)) },
			ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return Validate(asV2(o)) },
			Columns:        v2.Hooks.Columns,
			Row:            func(o runtime.Object) []interface{} { return v2.Hooks.Row(asV2(o)) },
		}}
}

// addConversions registers ToV1 and ToV2 with the scheme (server-side
// apply converts managed fields between the versions through it).
func addConversions(s *runtime.Scheme) error {
	err := s.AddConversionFunc((*autoscalingv2.HorizontalPodAutoscaler)(nil), (*autoscalingv1.HorizontalPodAutoscaler)(nil),
		func(a, b interface{}, _ conversion.Scope) error {
			*b.(*autoscalingv1.HorizontalPodAutoscaler) = *ToV1(a.(*autoscalingv2.HorizontalPodAutoscaler))
			return nil
		})
	if err != nil {
		return err
	}
	return s.AddConversionFunc((*autoscalingv1.HorizontalPodAutoscaler)(nil), (*autoscalingv2.HorizontalPodAutoscaler)(nil),
		func(a, b interface{}, _ conversion.Scope) error {
			*b.(*autoscalingv2.HorizontalPodAutoscaler) = *ToV2(a.(*autoscalingv1.HorizontalPodAutoscaler))
			return nil
		})
}

// ToV1 converts a v2 HorizontalPodAutoscaler to v1 as upstream does: the
// CPU utilization target and status are v1 fields, other metrics, the
// behavior and the conditions go to annotations.
func ToV1(in *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv1.HorizontalPodAutoscaler {
	in = in.DeepCopy()
	out := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{ObservedGeneration: in.Status.ObservedGeneration,
			LastScaleTime: in.Status.LastScaleTime, CurrentReplicas: in.Status.CurrentReplicas, DesiredReplicas: in.Status.DesiredReplicas}}
	out.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))
	ann := map[string]string{}
	for k, v := range in.Annotations {
		ann[k] = v
	}
	for _, k := range roundTripAnnotations {
		delete(ann, k)
	}
	var others []autoscalingv2.MetricSpec
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			out.Spec.TargetCPUUtilizationPercentage = m.Resource.Target.AverageUtilization
			continue
		}
		others = append(others, m)
	}
	for _, m := range in.Status.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU {
			out.Status.CurrentCPUUtilizationPercentage = m.Resource.Current.AverageUtilization
		}
	}
	setJSON(ann, metricSpecsAnnotation, others, len(others) > 0)
	setJSON(ann, behaviorAnnotation, in.Spec.Behavior, in.Spec.Behavior != nil)
	setJSON(ann, metricStatusesAnnotation, in.Status.CurrentMetrics, len(in.Status.CurrentMetrics) > 0)
	setJSON(ann, conditionsAnnotation, in.Status.Conditions, len(in.Status.Conditions) > 0)
	out.Annotations = ann
	if len(ann) == 0 {
		out.Annotations = nil
	}
	return out
}

// isCPUUtilization: the metric is v1's targetCPUUtilizationPercentage.
func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	r := m.Resource
	return m.Type == autoscalingv2.ResourceMetricSourceType && r != nil && r.Name == corev1.ResourceCPU &&
		r.Target.Type == autoscalingv2.UtilizationMetricType && r.Target.AverageUtilization != nil
}

func setJSON(ann map[string]string, key string, v any, set bool) {
	if !set {
		return
	}
	if b, err := json.Marshal(v); err == nil {
		ann[key] = string(b)
	}
}

// ToV2 converts a v1 HorizontalPodAutoscaler to v2, taking back from the
// annotations what ToV1 put there; without any metric, the target is 80 %
// CPU utilization (v1's implicit default).
func ToV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	in = in.DeepCopy()
	out := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: in.Status.ObservedGeneration,
			LastScaleTime: in.Status.LastScaleTime, CurrentReplicas: in.Status.CurrentReplicas, DesiredReplicas: in.Status.DesiredReplicas}}
	out.SetGroupVersionKind(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))
	ann := in.Annotations
	getJSON(ann, metricSpecsAnnotation, &out.Spec.Metrics)
	if u := in.Spec.TargetCPUUtilizationPercentage; u != nil {
		out.Spec.Metrics = append(out.Spec.Metrics, cpuMetric(*u))
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuMetric(80)}
	}
	getJSON(ann, behaviorAnnotation, &out.Spec.Behavior)
	getJSON(ann, metricStatusesAnnotation, &out.Status.CurrentMetrics)
	if u := in.Status.CurrentCPUUtilizationPercentage; u != nil && len(out.Status.CurrentMetrics) == 0 {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: u}}}}
	}
	getJSON(ann, conditionsAnnotation, &out.Status.Conditions)
	for _, k := range roundTripAnnotations {
		delete(out.Annotations, k)
	}
	if len(out.Annotations) == 0 {
		out.Annotations = nil
	}
	return out
}

func cpuMetric(u int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(u)}}}
}

// getJSON decodes ann[key] into v; a value that does not decode is
// ignored, as upstream ignores it.
func getJSON(ann map[string]string, key string, v any) {
	if s, ok := ann[key]; ok {
		_ = json.Unmarshal([]byte(s), v)
	}
}
