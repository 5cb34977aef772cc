package integration

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("ChartGroups", testChartGroups)
}

// testChartGroups: the objects charts create besides workloads —
// IngressClass (and the default class for Ingresses), RuntimeClass, CSI
// objects and HorizontalPodAutoscaler — with defaults, validation and
// printing.
func testChartGroups(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	cs := s.Clientset
	icName := "it-" + ns
	_, err := cs.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: icName,
		Annotations: map[string]string{"ingressclass.kubernetes.io/is-default-class": "true"}},
		Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress"}}, metav1.CreateOptions{})
	must(t, err, "create IngressClass")
	t.Cleanup(func() { _ = cs.NetworkingV1().IngressClasses().Delete(ctxT(t), icName, metav1.DeleteOptions{}) })
	ing, err := cs.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}, metav1.CreateOptions{})
	must(t, err, "create Ingress")
	if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != icName {
		t.Fatalf("default IngressClass not set: %v", ing.Spec.IngressClassName)
	}
	_, err = cs.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "it-bad-" + ns},
		Spec: networkingv1.IngressClassSpec{}}, metav1.CreateOptions{})
	wantField(t, err, "spec.controller")
	_, err = cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "it-bad-" + ns}, Handler: "Not_A_Label"}, metav1.CreateOptions{})
	wantField(t, err, "handler")
	rc, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "it-" + ns}, Handler: "runc"}, metav1.CreateOptions{})
	must(t, err, "create RuntimeClass")
	t.Cleanup(func() { _ = cs.NodeV1().RuntimeClasses().Delete(ctxT(t), rc.Name, metav1.DeleteOptions{}) })
	drv, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "it-" + ns + ".example.com"}}, metav1.CreateOptions{})
	must(t, err, "create CSIDriver")
	t.Cleanup(func() { _ = cs.StorageV1().CSIDrivers().Delete(ctxT(t), drv.Name, metav1.DeleteOptions{}) })
	if !ptr.Deref(drv.Spec.AttachRequired, false) || len(drv.Spec.VolumeLifecycleModes) != 1 {
		t.Fatalf("CSIDriver defaults: %+v", drv.Spec)
	}
	_, err = cs.StorageV1().VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "it-" + ns},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "x", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv")}}}, metav1.CreateOptions{})
	wantField(t, err, "spec.nodeName")
	testHPA(t, s, ns)
}

func testHPA(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	hpas := s.Clientset.AutoscalingV2().HorizontalPodAutoscalers(ns)
	h, err := hpas.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}, metav1.CreateOptions{})
	must(t, err, "create HPA")
	if ptr.Deref(h.Spec.MinReplicas, 0) != 1 || len(h.Spec.Metrics) != 1 || *h.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Fatalf("HPA defaults: %+v", h.Spec)
	}
	h.Spec.MinReplicas = ptr.To(int32(9))
	_, err = hpas.Update(ctx, h, metav1.UpdateOptions{})
	wantField(t, err, "spec.maxReplicas")
	body, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath("/apis/autoscaling/v2/namespaces/"+ns+"/horizontalpodautoscalers").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	must(t, err, "HPA table")
	for _, want := range []string{`"Reference"`, `"Targets"`, `"Deployment/web"`, `cpu: \u003cunknown\u003e/80%`} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("HPA table lacks %s: %.600s", want, body)
		}
	}
}
