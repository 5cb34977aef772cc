package autoscaling

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestDefaultBehavior(t *testing.T) {
	h := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
		Behavior:       &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(30))}}}}
	Default(h)
	up, down := h.Spec.Behavior.ScaleUp, h.Spec.Behavior.ScaleDown
	if *up.StabilizationWindowSeconds != 0 || *up.SelectPolicy != autoscalingv2.MaxChangePolicySelect || len(up.Policies) != 2 ||
		up.Policies[0].Value != 4 || up.Policies[1].Value != 100 || up.Policies[1].PeriodSeconds != 15 {
		t.Fatalf("scaleUp %+v", up)
	}
	if *down.StabilizationWindowSeconds != 30 || *down.SelectPolicy != autoscalingv2.MaxChangePolicySelect || len(down.Policies) != 1 ||
		down.Policies[0].Type != autoscalingv2.PercentScalingPolicy || down.Policies[0].Value != 100 {
		t.Fatalf("scaleDown %+v", down)
	}
	if errs := Validate(h); len(errs) != 0 {
		t.Fatalf("defaulted behavior invalid: %v", errs)
	}
	// Without behavior nothing is added (the controller's defaults apply).
	plain := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3}}
	Default(plain)
	if plain.Spec.Behavior != nil {
		t.Fatalf("behavior added: %+v", plain.Spec.Behavior)
	}
}

func TestValidateBehavior(t *testing.T) {
	h := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(4000)), SelectPolicy: ptr.To(autoscalingv2.ScalingPolicySelect("Most")),
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Pods", Value: 0, PeriodSeconds: 1801}}},
			ScaleDown: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{}}}}}
	var msgs []string
	for _, e := range Validate(h) {
		msgs = append(msgs, e.Error())
	}
	got := strings.Join(msgs, "\n")
	for _, want := range []string{"spec.behavior.scaleUp.stabilizationWindowSeconds", "spec.behavior.scaleUp.selectPolicy",
		"spec.behavior.scaleUp.policies[0].value", "spec.behavior.scaleUp.policies[0].periodSeconds", "spec.behavior.scaleDown.policies: Required"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	h.Spec.Behavior.ScaleDown.SelectPolicy = ptr.To(autoscalingv2.DisabledPolicySelect)
	for _, e := range Validate(h) {
		if strings.Contains(e.Error(), "scaleDown") {
			t.Errorf("Disabled needs no policies: %v", e)
		}
	}
}

func TestTargetsCell(t *testing.T) {
	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: "memory", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100Mi"))}}}
	cpu := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: "cpu", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))}}}
	pods := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Target: autoscalingv2.MetricTarget{AverageValue: ptr.To(resource.MustParse("10"))}}}
	h := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Metrics: []autoscalingv2.MetricSpec{memory, cpu}}}
	if got := targets(h); got != "memory: <unknown>/100Mi, cpu: <unknown>/50%" {
		t.Fatalf("no status: %q", got)
	}
	h.Status.CurrentMetrics = []autoscalingv2.MetricStatus{
		{Type: "Resource", Resource: &autoscalingv2.ResourceMetricStatus{Name: "memory", Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(resource.MustParse("10Mi"))}}},
		{Type: "Resource", Resource: &autoscalingv2.ResourceMetricStatus{Name: "cpu", Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To(int32(12))}}},
	}
	h.Spec.Metrics = append(h.Spec.Metrics, pods)
	if got := targets(h); got != "memory: 10Mi/100Mi, cpu: 12%/50% + 1 more..." {
		t.Fatalf("with status: %q", got)
	}
	h.Spec.Metrics = []autoscalingv2.MetricSpec{pods}
	if got := targets(h); got != "<unknown>/10" {
		t.Fatalf("pods: %q", got)
	}
}
