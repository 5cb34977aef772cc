package integration

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("PodTemplates", testPodTemplates)
}

func podTemplate(name string, l map[string]string) *corev1.PodTemplate {
	return &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Template: *rcTemplate(map[string]string{"app": name})}
}

// testPodTemplates: CRUD, every patch type, watch, label selectors,
// deletecollection, defaults, validation and the table of core/v1
// PodTemplates, over protobuf.
func testPodTemplates(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	pts := protobufClient(t, s).CoreV1().PodTemplates(ns)
	w, err := pts.Watch(ctx, metav1.ListOptions{LabelSelector: "set=a"})
	must(t, err, "watch")
	defer w.Stop()
	pt, err := pts.Create(ctx, podTemplate("one", map[string]string{"set": "a"}), metav1.CreateOptions{})
	must(t, err, "create")
	if pt.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || pt.Template.Spec.Containers[0].TerminationMessagePath == "" {
		t.Fatalf("template not defaulted: %+v", pt.Template.Spec)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added || ev.Object.(*corev1.PodTemplate).Name != "one" {
			t.Fatalf("watch event %s %T", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event")
	}
	bad := podTemplate("bad", nil)
	bad.Template.Spec.Containers[0].Image = ""
	_, err = pts.Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "template.spec.containers[0].image")

	for _, p := range []struct {
		typ  types.PatchType
		body string
	}{
		{types.StrategicMergePatchType, `{"metadata":{"labels":{"smp":"1"}}}`},
		{types.MergePatchType, `{"metadata":{"labels":{"merge":"1"}}}`},
		{types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/json","value":"1"}]`},
	} {
		_, err := pts.Patch(ctx, "one", p.typ, []byte(p.body), metav1.PatchOptions{})
		must(t, err, "%s patch", p.typ)
	}
	applied, err := pts.Apply(ctx, corev1ac.PodTemplate("one", ns).WithLabels(map[string]string{"apply": "1"}),
		metav1.ApplyOptions{FieldManager: "it"})
	must(t, err, "apply")
	for _, k := range []string{"set", "smp", "merge", "json", "apply"} {
		if applied.Labels[k] == "" {
			t.Fatalf("label %s missing after the patches: %v", k, applied.Labels)
		}
	}
	applied.Annotations = map[string]string{"updated": "true"}
	upd, err := pts.Update(ctx, applied, metav1.UpdateOptions{})
	must(t, err, "update")
	if upd.Annotations["updated"] != "true" || upd.Generation != 0 {
		t.Fatalf("update: annotations %v generation %d", upd.Annotations, upd.Generation)
	}
	testPodTemplateTableDelete(t, s, ns)
}

// testPodTemplateTableDelete: kubectl's columns, DELETE answering with the
// object, and deletecollection by label.
func testPodTemplateTableDelete(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	pts := s.Clientset.CoreV1().PodTemplates(ns)
	for _, n := range []string{"two", "three"} {
		_, err := pts.Create(ctx, podTemplate(n, map[string]string{"set": "b"}), metav1.CreateOptions{})
		must(t, err, "create %s", n)
	}
	rest := s.Clientset.CoreV1().RESTClient()
	body, err := rest.Get().AbsPath("/api/v1/namespaces/"+ns+"/podtemplates").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	must(t, err, "table")
	for _, want := range []string{`"Containers"`, `"Images"`, `"Pod Labels"`, `["two","web","nginx:1.25","app=two"]`} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("table lacks %s: %.800s", want, body)
		}
	}
	body, err = rest.Delete().AbsPath("/api/v1/namespaces/" + ns + "/podtemplates/one").DoRaw(ctx)
	must(t, err, "delete")
	if !strings.Contains(string(body), `"kind":"PodTemplate"`) {
		t.Fatalf("DELETE answered %.300s, want the object", body)
	}
	must(t, pts.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "set=b"}), "deletecollection")
	l, err := pts.List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if len(l.Items) != 0 {
		t.Fatalf("%d pod templates left", len(l.Items))
	}
}
