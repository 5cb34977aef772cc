package autoscaling

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestV1RoundTrip(t *testing.T) {
	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))}}}
	v2 := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "ns", Annotations: map[string]string{"keep": "me"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "d", APIVersion: "apps/v1"},
			MinReplicas: ptr.To(int32(2)), MaxReplicas: 5, Metrics: []autoscalingv2.MetricSpec{memory, cpuMetric(60)},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(30))}}},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 4,
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "R"}}},
	}
	v1 := ToV1(v2)
	if p := v1.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 60 || v1.Spec.MaxReplicas != 5 || v1.Status.DesiredReplicas != 4 {
		t.Fatalf("v1 = %+v", v1)
	}
	if v1.Annotations["keep"] != "me" || v1.Annotations[metricSpecsAnnotation] == "" || v1.Annotations[conditionsAnnotation] == "" {
		t.Fatalf("v1 annotations %v", v1.Annotations)
	}
	back := ToV2(v1)
	back.TypeMeta = v2.TypeMeta
	if !apiequality.Semantic.DeepEqual(back, v2) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, v2)
	}
	plain := ToV2(&autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3}})
	if len(plain.Spec.Metrics) != 1 || *plain.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 || plain.Annotations != nil {
		t.Fatalf("v1 without a target: %+v", plain)
	}
}
