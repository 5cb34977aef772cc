package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("PatchJSONMerge", testPatchMerge)
	register("PatchStrategicMergeContainersByName", testPatchStrategic)
	register("PatchJSONPatch", testPatchJSON)
}

func testPatchMerge(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	_, err := c.Create(ctx, cm(ns, "m", map[string]string{"a": "1", "b": "2"}), metav1.CreateOptions{})
	must(t, err, "create")
	got, err := c.Patch(ctx, "m", types.MergePatchType, []byte(`{"data":{"a":null,"c":"3"},"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	must(t, err, "merge patch")
	if _, ok := got.Data["a"]; ok || got.Data["b"] != "2" || got.Data["c"] != "3" || got.Labels["x"] != "y" {
		t.Fatalf("after merge patch: data %v labels %v; want a removed, b=2, c=3, x=y", got.Data, got.Labels)
	}
	_, err = c.Patch(ctx, "m", types.MergePatchType, []byte(`{"data":`), metav1.PatchOptions{})
	wantCode(t, err, 400, "malformed merge patch")
	_, err = c.Patch(ctx, "nope", types.MergePatchType, []byte(`{"data":{"a":"1"}}`), metav1.PatchOptions{})
	wantCode(t, err, 404, "merge patch of a missing object")
	_, err = c.Patch(ctx, "m", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"1"}}`), metav1.PatchOptions{})
	wantCode(t, err, 409, "merge patch with a stale resourceVersion precondition")
}

func testPatchStrategic(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.AppsV1().Deployments(ns)
	d := webDeployment(ns, "web", 1)
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers,
		corev1.Container{Name: "sidecar", Image: "busybox:1.36", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}})
	_, err := c.Create(ctx, d, metav1.CreateOptions{})
	must(t, err, "create")
	// Containers merge by name: only the sidecar changes, nginx is kept.
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.37","env":[{"name":"B","value":"2"}]}]}}}}`
	got, err := c.Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	must(t, err, "strategic merge patch")
	cs0 := got.Spec.Template.Spec.Containers
	if len(cs0) != 2 || cs0[0].Name != "nginx" || cs0[0].Image != "nginx:1.25" || cs0[1].Image != "busybox:1.37" {
		t.Fatalf("containers after SMP = %+v; want nginx kept, sidecar image busybox:1.37", cs0)
	}
	if len(cs0[1].Env) != 2 {
		t.Fatalf("sidecar env after SMP = %v; want A and B (env merges by name)", cs0[1].Env)
	}
	if got.Generation != 2 {
		t.Errorf("generation after a spec patch = %d, want 2", got.Generation)
	}
	// $patch: delete removes one list element by its merge key.
	del := `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`
	got, err = c.Patch(ctx, "web", types.StrategicMergePatchType, []byte(del), metav1.PatchOptions{})
	must(t, err, "SMP $patch delete")
	if n := len(got.Spec.Template.Spec.Containers); n != 1 || got.Spec.Template.Spec.Containers[0].Name != "nginx" {
		t.Fatalf("containers after $patch delete = %+v; want only nginx", got.Spec.Template.Spec.Containers)
	}
	// A merge patch of the same list replaces it whole.
	mp := `{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"x:1"}]}}}}`
	got, err = c.Patch(ctx, "web", types.MergePatchType, []byte(mp), metav1.PatchOptions{})
	must(t, err, "merge patch of containers")
	if n := len(got.Spec.Template.Spec.Containers); n != 1 || got.Spec.Template.Spec.Containers[0].Name != "only" {
		t.Fatalf("containers after JSON merge patch = %+v; want the list replaced", got.Spec.Template.Spec.Containers)
	}
	bad := `{"spec":{"template":{"spec":{"containers":[{"name":"only","imagePullPolicy":"Sometimes"}]}}}}`
	_, err = c.Patch(ctx, "web", types.StrategicMergePatchType, []byte(bad), metav1.PatchOptions{})
	wantCode(t, err, 422, "SMP producing an invalid object (imagePullPolicy Sometimes)")
}

func testPatchJSON(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	_, err := c.Create(ctx, cm(ns, "j", map[string]string{"a": "1"}), metav1.CreateOptions{})
	must(t, err, "create")
	p := `[{"op":"add","path":"/data/b","value":"2"},{"op":"replace","path":"/data/a","value":"10"},{"op":"add","path":"/metadata/labels","value":{"l":"v"}}]`
	got, err := c.Patch(ctx, "j", types.JSONPatchType, []byte(p), metav1.PatchOptions{})
	must(t, err, "json patch")
	if got.Data["a"] != "10" || got.Data["b"] != "2" || got.Labels["l"] != "v" {
		t.Fatalf("after json patch: data %v labels %v", got.Data, got.Labels)
	}
	got, err = c.Patch(ctx, "j", types.JSONPatchType, []byte(`[{"op":"remove","path":"/data/b"}]`), metav1.PatchOptions{})
	must(t, err, "json patch remove")
	if _, ok := got.Data["b"]; ok {
		t.Fatalf("remove op left data.b: %v", got.Data)
	}
	before := got.ResourceVersion
	// A failing test op leaves the object alone.
	_, err = c.Patch(ctx, "j", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/a","value":"nope"},{"op":"remove","path":"/data/a"}]`), metav1.PatchOptions{})
	if err == nil {
		t.Fatalf("json patch with a failing test op succeeded")
	}
	_, err = c.Patch(ctx, "j", types.JSONPatchType, []byte(`[{"op":"remove","path":"/data/missing"}]`), metav1.PatchOptions{})
	if err == nil {
		t.Fatalf("json patch removing a missing path succeeded")
	}
	_, err = c.Patch(ctx, "j", types.JSONPatchType, []byte(`{"op":"add"}`), metav1.PatchOptions{})
	wantCode(t, err, 400, "json patch that is not an array")
	got, err = c.Get(ctx, "j", metav1.GetOptions{})
	must(t, err, "get")
	if got.ResourceVersion != before || got.Data["a"] != "10" {
		t.Fatalf("failed json patches changed the object: rv %s→%s data %v", before, got.ResourceVersion, got.Data)
	}
}
