package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

// TestHPAController: the horizontal pod autoscaler of a real `orch server`
// (no agent, so no pod runs and no metrics exist). An HPA whose target is
// a custom resource of a CRD that does not exist yet reports
// FailedGetScale; once the CRD (with a scale subresource) and the object
// exist, the RESTMapper finds the new kind and the object's replicas are
// raised to minReplicas through its scale subresource; its scale has no
// selector, so ScalingActive is InvalidSelector. A Deployment below
// minReplicas is raised too, with upstream's SuccessfulRescale event, then
// reports FailedGetResourceMetric (no metrics) without scaling further; a
// Deployment above maxReplicas is lowered. Pods metrics get
// FailedGetPodsMetric. StatefulSets and ReplicaSets are raised as well.
func TestHPAController(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--horizontal-pod-autoscaler-sync-period", "2s"}})
	defer func() {
		if t.Failed() {
			t.Logf("--- server output (tail) ---\n%s", s.Output())
		}
	}()
	ns := newNamespace(t, s.Clientset)
	t.Run("CustomResourceCreatedLater", func(t *testing.T) { hpaCustomResource(t, s, ns) })
	t.Run("DeploymentBounds", func(t *testing.T) { hpaDeploymentBounds(t, s.Clientset, ns) })
	t.Run("PodsMetricUnsupported", func(t *testing.T) { hpaPodsMetric(t, s.Clientset, ns) })
	t.Run("StatefulSetAndReplicaSet", func(t *testing.T) { hpaOtherKinds(t, s.Clientset, ns) })
}

// hpaOtherKinds: StatefulSets and ReplicaSets are scaled through their
// scale subresources too.
func hpaOtherKinds(t *testing.T, cs kubernetes.Interface, ns string) {
	ctx := ctxT(t)
	d := hpaDeployment("sts", 1)
	_, err := cs.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: d.ObjectMeta,
		Spec: appsv1.StatefulSetSpec{Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template}}, metav1.CreateOptions{})
	must(t, err, "create StatefulSet")
	d = hpaDeployment("rs", 1)
	_, err = cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: d.ObjectMeta,
		Spec: appsv1.ReplicaSetSpec{Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template}}, metav1.CreateOptions{})
	must(t, err, "create ReplicaSet")
	for _, kind := range []string{"StatefulSet", "ReplicaSet"} {
		name := map[string]string{"StatefulSet": "sts", "ReplicaSet": "rs"}[kind]
		_, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx,
			hpaObject(name, "apps/v1", kind, name, 3, 5, cpuTarget(50)), metav1.CreateOptions{})
		must(t, err, "create HPA %s", name)
		waitHPA(t, cs, ns, name, "a rescale to 3", func(h *autoscalingv2.HorizontalPodAutoscaler) bool { return h.Status.DesiredReplicas == 3 })
		waitEvent(t, cs, ns, name, "SuccessfulRescale", "New size: 3; reason: Current number of replicas below Spec.MinReplicas")
	}
	sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "sts", metav1.GetOptions{})
	must(t, err, "get StatefulSet")
	rs, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, "rs", metav1.GetOptions{})
	must(t, err, "get ReplicaSet")
	if ptr.Deref(sts.Spec.Replicas, 0) != 3 || ptr.Deref(rs.Spec.Replicas, 0) != 3 {
		t.Fatalf("StatefulSet replicas %d, ReplicaSet replicas %d, want 3", ptr.Deref(sts.Spec.Replicas, 0), ptr.Deref(rs.Spec.Replicas, 0))
	}
}

func hpaDeployment(name string, replicas int32) *appsv1.Deployment {
	l := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas),
		Selector: &metav1.LabelSelector{MatchLabels: l},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "nginx:1.25", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}}}
}

func hpaObject(name, apiVersion, kind, target string, minR, maxR int32, metrics ...autoscalingv2.MetricSpec) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To(minR), MaxReplicas: maxR, Metrics: metrics,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: target}}}
}

// waitHPA polls the HPA until cond holds (the controller syncs every 2 s).
func waitHPA(t *testing.T, cs kubernetes.Interface, ns, name, what string, cond func(*autoscalingv2.HorizontalPodAutoscaler) bool) *autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	var h *autoscalingv2.HorizontalPodAutoscaler
	deadline := time.Now().Add(60 * time.Second)
	for {
		var err error
		h, err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && cond(h) {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("HPA %s: timed out waiting for %s: %v; status %+v", name, what, err, h.Status)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func hpaCondition(h *autoscalingv2.HorizontalPodAutoscaler, ct autoscalingv2.HorizontalPodAutoscalerConditionType) string {
	for _, c := range h.Status.Conditions {
		if c.Type == ct {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

// waitEvent waits for an Event of the HPA with reason and a message
// starting with prefix.
func waitEvent(t *testing.T, cs kubernetes.Interface, ns, hpa, reason, prefix string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		l, err := cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=" + hpa + ",reason=" + reason})
		if err == nil {
			for _, e := range l.Items {
				if strings.HasPrefix(e.Message, prefix) && e.Source.Component == "horizontal-pod-autoscaler" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event %q for HPA %s (err %v)", reason, prefix, hpa, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func hpaCustomResource(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	group := fmt.Sprintf("hpa%d.example.com", time.Now().UnixNano()%100000)
	cs := s.Clientset
	_, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx,
		hpaObject("crd", group+"/v1", "Scaler", "sc", 3, 5, cpuTarget(50)), metav1.CreateOptions{})
	must(t, err, "create HPA")
	h := waitHPA(t, cs, ns, "crd", "FailedGetScale", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return hpaCondition(h, autoscalingv2.AbleToScale) == "False/FailedGetScale"
	})
	t.Logf("before the CRD: %+v", h.Status.Conditions)
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	crd := scalerCRD(group)
	createEstablished(t, ext, crd)
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	res := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "scalers"}).Namespace(ns)
	_, err = res.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Scaler",
		"metadata": map[string]any{"name": "sc"}, "spec": map[string]any{"replicas": int64(1)}}}, metav1.CreateOptions{})
	must(t, err, "create Scaler")
	h = waitHPA(t, cs, ns, "crd", "a rescale to 3", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return h.Status.DesiredReplicas == 3 && h.Status.LastScaleTime != nil
	})
	obj, err := res.Get(ctx, "sc", metav1.GetOptions{})
	must(t, err, "get Scaler")
	if r, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); r != 3 {
		t.Fatalf("Scaler spec.replicas %d, want 3", r)
	}
	waitEvent(t, cs, ns, "crd", "SuccessfulRescale", "New size: 3; reason: Current number of replicas below Spec.MinReplicas")
	waitHPA(t, cs, ns, "crd", "InvalidSelector", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return hpaCondition(h, autoscalingv2.ScalingActive) == "False/InvalidSelector" &&
			hpaCondition(h, autoscalingv2.AbleToScale) == "True/SucceededGetScale" && h.Status.CurrentReplicas == 3
	})
	waitEvent(t, cs, ns, "crd", "SelectorRequired", "selector is required")
}

// scalerCRD has a scale subresource with a labelSelectorPath the objects
// leave empty.
func scalerCRD(group string) *apiextensionsv1.CustomResourceDefinition {
	obj := func(p map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: p}
	}
	return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "scalers." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "scalers", Singular: "scaler", Kind: "Scaler"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: ptr.To(obj(map[string]apiextensionsv1.JSONSchemaProps{
					"spec":   obj(map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}),
					"status": obj(map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}, "selector": {Type: "string"}}),
				}))},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas",
						StatusReplicasPath: ".status.replicas", LabelSelectorPath: ptr.To(".status.selector")}},
			}}}}
}

func cpuTarget(p int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(p)}}}
}

func hpaDeploymentBounds(t *testing.T, cs kubernetes.Interface, ns string) {
	ctx := ctxT(t)
	for name, replicas := range map[string]int32{"low": 1, "high": 6} {
		_, err := cs.AppsV1().Deployments(ns).Create(ctx, hpaDeployment(name, replicas), metav1.CreateOptions{})
		must(t, err, "create Deployment %s", name)
		_, err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx,
			hpaObject(name, "apps/v1", "Deployment", name, 2, 4, cpuTarget(50)), metav1.CreateOptions{})
		must(t, err, "create HPA %s", name)
	}
	for name, want := range map[string]int32{"low": 2, "high": 4} {
		waitHPA(t, cs, ns, name, fmt.Sprintf("a rescale to %d", want), func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
			return h.Status.DesiredReplicas == want && hpaCondition(h, autoscalingv2.AbleToScale) != ""
		})
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		must(t, err, "get Deployment")
		if ptr.Deref(d.Spec.Replicas, 0) != want {
			t.Fatalf("Deployment %s replicas %d, want %d", name, ptr.Deref(d.Spec.Replicas, 0), want)
		}
	}
	waitEvent(t, cs, ns, "low", "SuccessfulRescale", "New size: 2; reason: Current number of replicas below Spec.MinReplicas")
	waitEvent(t, cs, ns, "high", "SuccessfulRescale", "New size: 4; reason: Current number of replicas above Spec.MaxReplicas")
	// Within bounds now: the controller asks the metrics API, which has no
	// pod metrics (no node runs the pods), and leaves the size alone.
	h := waitHPA(t, cs, ns, "low", "FailedGetResourceMetric", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return hpaCondition(h, autoscalingv2.ScalingActive) == "False/FailedGetResourceMetric" && h.Status.CurrentReplicas == 2
	})
	if ptr.Deref(h.Status.ObservedGeneration, 0) != h.Generation || h.Status.DesiredReplicas != 2 {
		t.Fatalf("status %+v (generation %d)", h.Status, h.Generation)
	}
	waitEvent(t, cs, ns, "low", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value")
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "low", metav1.GetOptions{})
	must(t, err, "get Deployment")
	if ptr.Deref(d.Spec.Replicas, 0) != 2 {
		t.Fatalf("Deployment low rescaled to %d without metrics", ptr.Deref(d.Spec.Replicas, 0))
	}
}

func hpaPodsMetric(t *testing.T, cs kubernetes.Interface, ns string) {
	ctx := ctxT(t)
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, hpaDeployment("qps", 2), metav1.CreateOptions{})
	must(t, err, "create Deployment")
	pods := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "requests_per_second"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))}}}
	_, err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx,
		hpaObject("qps", "apps/v1", "Deployment", "qps", 1, 4, pods), metav1.CreateOptions{})
	must(t, err, "create HPA")
	h := waitHPA(t, cs, ns, "qps", "FailedGetPodsMetric", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return hpaCondition(h, autoscalingv2.ScalingActive) == "False/FailedGetPodsMetric"
	})
	t.Logf("pods metric conditions: %+v", h.Status.Conditions)
	waitEvent(t, cs, ns, "qps", "FailedGetPodsMetric", "unable to get metric requests_per_second")
}
