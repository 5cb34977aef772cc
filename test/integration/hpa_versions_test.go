package integration

import (
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("HPAVersions", testHPAVersions)
}

// testHPAVersions: HorizontalPodAutoscalers are served as autoscaling/v2
// (preferred) and v1 over the same objects. A v2 object with a memory
// metric reads in v1 as its CPU target, keeps the memory metric through a
// v1 update, and a v1 object without a target gets 80 % CPU in v2.
func testHPAVersions(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	g, err := s.Clientset.Discovery().ServerGroups()
	must(t, err, "groups")
	for _, grp := range g.Groups {
		if grp.Name == "autoscaling" && (len(grp.Versions) != 2 || grp.PreferredVersion.Version != "v2" || grp.Versions[1].Version != "v1") {
			t.Fatalf("autoscaling versions %+v", grp)
		}
	}
	v1c, v2c := s.Clientset.AutoscalingV1().HorizontalPodAutoscalers(ns), s.Clientset.AutoscalingV2().HorizontalPodAutoscalers(ns)
	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))}}}
	cpu := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))}}}
	ref := autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}
	_, err = v2c.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "two"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MaxReplicas: 4,
			Metrics: []autoscalingv2.MetricSpec{memory, cpu}}}, metav1.CreateOptions{})
	must(t, err, "create v2")
	h1, err := v1c.Get(ctx, "two", metav1.GetOptions{})
	must(t, err, "get as v1")
	if p := h1.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 50 || ptr.Deref(h1.Spec.MinReplicas, 0) != 1 {
		t.Fatalf("v1 view: %+v", h1.Spec)
	}
	h1.Spec.MaxReplicas = 6
	_, err = v1c.Update(ctx, h1, metav1.UpdateOptions{})
	must(t, err, "update as v1")
	h2, err := v2c.Get(ctx, "two", metav1.GetOptions{})
	must(t, err, "get as v2")
	if h2.Spec.MaxReplicas != 6 || len(h2.Spec.Metrics) != 2 || h2.Spec.Metrics[0].Resource.Name != corev1.ResourceMemory || len(h2.Annotations) != 0 {
		t.Fatalf("v2 after a v1 update: %+v %v", h2.Spec, h2.Annotations)
	}
	_, err = v1c.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "one"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(ref), MaxReplicas: 3}}, metav1.CreateOptions{})
	must(t, err, "create v1")
	h2, err = v2c.Get(ctx, "one", metav1.GetOptions{})
	must(t, err, "get v1 object as v2")
	if len(h2.Spec.Metrics) != 1 || *h2.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Fatalf("v1 object as v2: %+v", h2.Spec.Metrics)
	}
	_, err = v1c.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(ref)}}, metav1.CreateOptions{})
	wantField(t, err, "spec.maxReplicas")
	testHPAApplyAcrossVersions(t, s, ns)
}

// testHPAApplyAcrossVersions: server-side apply through v2 on an object
// written through v1, then through v1 by another manager: the managed
// fields of both versions are compared (a conflict on maxReplicas).
func testHPAApplyAcrossVersions(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	v2 := `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"one"},` +
		`"spec":{"maxReplicas":5,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}}`
	h, err := s.Clientset.AutoscalingV2().HorizontalPodAutoscalers(ns).Patch(ctx, "one", types.ApplyPatchType, []byte(v2),
		metav1.PatchOptions{FieldManager: "v2-applier", Force: ptr.To(true)})
	must(t, err, "apply through v2")
	if h.Spec.MaxReplicas != 5 {
		t.Fatalf("applied: %+v", h.Spec)
	}
	v1 := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"one"},` +
		`"spec":{"maxReplicas":6,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}}`
	_, err = s.Clientset.AutoscalingV1().HorizontalPodAutoscalers(ns).Patch(ctx, "one", types.ApplyPatchType, []byte(v1),
		metav1.PatchOptions{FieldManager: "v1-applier"})
	if st := statusOf(err); st == nil || st.Code != 409 || !strings.Contains(st.Message, `conflict with "v2-applier": .spec.maxReplicas`) {
		t.Fatalf("apply through v1: %v", err)
	}
}
