package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("ReplicationControllers", testReplicationControllers)
	register("ReplicationControllerScaleStatus", testRCScaleStatus)
	register("ReplicationControllerQuotaDelete", testRCQuotaDelete)
}

func rcTemplate(l map[string]string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}}}
}

func rcNamed(name string) *corev1.ReplicationController {
	return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ReplicationControllerSpec{Template: rcTemplate(map[string]string{"app": name})}}
}

// protobufClient is a clientset that speaks protobuf both ways, as the
// in-process controllers and client-go's defaults do.
func protobufClient(t *testing.T, s *testutil.Server) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(s.Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "protobuf clientset")
	return cs
}

// testReplicationControllers: defaults, validation, discovery, table,
// field selector and server-side apply of core/v1 ReplicationControllers,
// over protobuf.
func testReplicationControllers(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	rcs := protobufClient(t, s).CoreV1().ReplicationControllers(ns)
	rc, err := rcs.Create(ctx, rcNamed("web"), metav1.CreateOptions{})
	must(t, err, "create")
	if rc.Spec.Selector["app"] != "web" || rc.Labels["app"] != "web" || ptr.Deref(rc.Spec.Replicas, 0) != 1 ||
		rc.Generation != 1 || rc.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Fatalf("defaults: labels %v spec %+v generation %d", rc.Labels, rc.Spec, rc.Generation)
	}
	bad := rcNamed("bad")
	bad.Spec.Selector = map[string]string{"app": "other"}
	_, err = rcs.Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "spec.template.metadata.labels")
	bad = rcNamed("bad")
	bad.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	_, err = rcs.Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "spec.template.spec.restartPolicy")

	testRCDiscovery(t, s)
	body, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/"+ns+"/replicationcontrollers").
		Param("includeObject", "None").SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	must(t, err, "RC table")
	for _, want := range []string{`"Desired"`, `"Current"`, `"Ready"`, `"Selector"`, `["web",1,0,0,`, `"web","nginx:1.25","app=web"]`} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("RC table lacks %s: %.800s", want, body)
		}
	}
	ac := corev1ac.ReplicationController("web", ns).WithSpec(corev1ac.ReplicationControllerSpec().WithReplicas(4))
	applied, err := rcs.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "it", Force: true})
	must(t, err, "server-side apply")
	if *applied.Spec.Replicas != 4 || applied.Generation != 2 || !hasManager(applied.ManagedFields, "it") {
		t.Fatalf("after apply: replicas %d generation %d managers %v", *applied.Spec.Replicas, applied.Generation, applied.ManagedFields)
	}
	sel, err := rcs.List(ctx, metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "status.replicas=0"})
	must(t, err, "list by selectors")
	if len(sel.Items) != 1 {
		t.Fatalf("selectors found %d RCs", len(sel.Items))
	}
}

func hasManager(mf []metav1.ManagedFieldsEntry, name string) bool {
	return slices.ContainsFunc(mf, func(e metav1.ManagedFieldsEntry) bool { return e.Manager == name })
}

// testRCDiscovery: rc is a short name, all a category, status and scale subresources.
func testRCDiscovery(t *testing.T, s *testutil.Server) {
	t.Helper()
	list, err := s.Clientset.Discovery().ServerResourcesForGroupVersion("v1")
	must(t, err, "discovery of v1")
	found := map[string]metav1.APIResource{}
	for _, r := range list.APIResources {
		found[r.Name] = r
	}
	rc := found["replicationcontrollers"]
	if rc.Kind != "ReplicationController" || !slices.Equal(rc.ShortNames, []string{"rc"}) || !slices.Equal(rc.Categories, []string{"all"}) ||
		!rc.Namespaced || found["replicationcontrollers/status"].Kind != "ReplicationController" || found["replicationcontrollers/scale"].Kind != "Scale" {
		t.Fatalf("discovery: %+v / %+v / %+v", rc, found["replicationcontrollers/status"], found["replicationcontrollers/scale"])
	}
	if pt := found["podtemplates"]; pt.Kind != "PodTemplate" || !pt.Namespaced {
		t.Fatalf("discovery of podtemplates: %+v", pt)
	}
}

// testRCScaleStatus: the scale subresource reads and writes spec.replicas
// (bumping the generation); the status subresource writes only status and
// validates it; the main resource keeps status.
func testRCScaleStatus(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	rcs := s.Clientset.CoreV1().ReplicationControllers(ns)
	_, err := rcs.Create(ctx, rcNamed("web"), metav1.CreateOptions{})
	must(t, err, "create")
	sc, err := rcs.GetScale(ctx, "web", metav1.GetOptions{})
	must(t, err, "get scale")
	if sc.Spec.Replicas != 1 || sc.Status.Selector != "app=web" {
		t.Fatalf("scale %+v", sc)
	}
	sc.ResourceVersion, sc.Spec.Replicas = "", 3
	_, err = rcs.UpdateScale(ctx, "web", sc, metav1.UpdateOptions{})
	must(t, err, "update scale")
	_, err = rcs.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}, "scale")
	must(t, err, "patch scale")
	_, err = rcs.UpdateScale(ctx, "web", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: autoscalingv1.ScaleSpec{Replicas: -1}}, metav1.UpdateOptions{})
	wantCode(t, err, 422, "negative scale")
	rc, err := rcs.Get(ctx, "web", metav1.GetOptions{})
	must(t, err, "get")
	if *rc.Spec.Replicas != 2 || rc.Generation != 3 {
		t.Fatalf("after scaling: replicas %d generation %d", *rc.Spec.Replicas, rc.Generation)
	}
	rc.Spec.Replicas = ptr.To[int32](9)
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1, ObservedGeneration: 3}
	st, err := rcs.UpdateStatus(ctx, rc, metav1.UpdateOptions{})
	must(t, err, "update status")
	if *st.Spec.Replicas != 2 || st.Status.ReadyReplicas != 1 || st.Generation != 3 {
		t.Fatalf("status update: spec.replicas %d status %+v generation %d", *st.Spec.Replicas, st.Status, st.Generation)
	}
	_, err = rcs.Patch(ctx, "web", types.MergePatchType, []byte(`{"status":{"readyReplicas":5}}`), metav1.PatchOptions{}, "status")
	wantField(t, err, "status.readyReplicas")
	main, err := rcs.Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}},"status":{"replicas":0}}`), metav1.PatchOptions{})
	must(t, err, "patch")
	if main.Status.Replicas != 2 || main.Generation != 3 || main.Labels["x"] != "y" {
		t.Fatalf("main patch: status %+v generation %d labels %v", main.Status, main.Generation, main.Labels)
	}
}

// testRCQuotaDelete: replicationcontrollers is a standard quota name; a v1
// delete without a propagation policy orphans (the orphan finalizer waits
// for the garbage collector, which this server does not run).
func testRCQuotaDelete(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourceReplicationControllers: resource.MustParse("1"), "count/replicationcontrollers": resource.MustParse("1")}}}
	_, err := s.Clientset.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{})
	must(t, err, "create quota")
	rcs := s.Clientset.CoreV1().ReplicationControllers(ns)
	_, err = rcs.Create(ctx, rcNamed("one"), metav1.CreateOptions{})
	must(t, err, "create within quota")
	_, err = rcs.Create(ctx, rcNamed("two"), metav1.CreateOptions{})
	if st := wantCode(t, err, 403, "create over quota"); !strings.Contains(st.Message, "exceeded quota: q") {
		t.Fatalf("quota message %q", st.Message)
	}
	must(t, rcs.Delete(ctx, "one", metav1.DeleteOptions{}), "delete")
	rc, err := rcs.Get(ctx, "one", metav1.GetOptions{})
	must(t, err, "get after delete")
	if rc.DeletionTimestamp == nil || !slices.Contains(rc.Finalizers, metav1.FinalizerOrphanDependents) {
		t.Fatalf("v1 delete did not orphan: finalizers %v", rc.Finalizers)
	}
	_, err = rcs.Patch(context.Background(), "one", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	must(t, err, "drop the orphan finalizer")
}
