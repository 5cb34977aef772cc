package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("CustomResources", testCustomResources)
	register("CustomResourcesServedOnceEstablished", testServedOnceEstablished)
}

// testServedOnceEstablished: a client that sees Established (here through
// a watch, the first moment it can) creates a custom resource at once, as
// Helm and operators do; the API server must already serve it. Ten CRDs,
// so a window between the Established write and the server's registry
// shows up.
func testServedOnceEstablished(t *testing.T, s *testutil.Server) {
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	for i := range 10 {
		group := fmt.Sprintf("se%d-%04x.example.com", i, time.Now().UnixNano()&0xffff)
		crd := widgetCRD(group)
		w, err := ext.ApiextensionsV1().CustomResourceDefinitions().Watch(ctx,
			metav1.ListOptions{FieldSelector: "metadata.name=" + crd.Name})
		must(t, err, "watch CRD")
		createCRD(t, ext, crd)
		waitEstablishedEvent(t, w, crd.Name)
		w.Stop()
		res := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
		_, err = res.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": "small"}}}, metav1.CreateOptions{})
		must(t, err, "create a Widget right after %s was Established", crd.Name)
	}
}

// waitEstablishedEvent reads w until the CRD shows Established=True.
func waitEstablishedEvent(t *testing.T, w watch.Interface, name string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch of CRD %s ended before Established", name)
			}
			if c, isCRD := ev.Object.(*apiextensionsv1.CustomResourceDefinition); isCRD && established(c) {
				return
			}
		case <-timeout:
			t.Fatalf("CRD %s not Established in 30 s", name)
		}
	}
}

// widgetCRD is a namespaced CRD with a schema (required, enum, default,
// minimum, int-or-string), status and scale subresources, printer columns,
// a selectable field, short names and a category; group is unique per test.
func widgetCRD(group string) *apiextensionsv1.CustomResourceDefinition {
	props := map[string]apiextensionsv1.JSONSchemaProps{
		"size":     {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"small"`)}, {Raw: []byte(`"large"`)}}},
		"replicas": {Type: "integer", Minimum: ptr.To(0.0), Default: &apiextensionsv1.JSON{Raw: []byte("1")}},
		"port":     {XIntOrString: true},
		"color":    {Type: "string"},
		"ports": {Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"name"},
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Required: []string{"name"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"name": {Type: "string"}, "port": {Type: "integer"}}}}},
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget",
				ShortNames: []string{"wdg"}, Categories: []string{"all"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", Required: []string{"size"}, Properties: props},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}},
					}}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Size", Type: "string", JSONPath: ".spec.size"}, {Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"}},
				SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}},
			}},
		},
	}
}

// testWidgetApplyValidation: an apply configuration with a field the
// schema lacks, or a key twice, is refused under fieldValidation=Strict
// with upstream's messages, and only warned about under Warn.
func testWidgetApplyValidation(t *testing.T, s *testutil.Server, group, ns string) {
	apply := func(body, validation string) (string, error) {
		res := s.Clientset.Discovery().RESTClient().Patch(types.ApplyPatchType).
			AbsPath("/apis", group, "v1", "namespaces", ns, "widgets", "applied-fv").
			Param("fieldManager", "it").Param("fieldValidation", validation).Body([]byte(body)).Do(ctxT(t))
		raw, _ := res.Raw()
		return string(raw), res.Error()
	}
	head := "apiVersion: " + group + "/v1\nkind: Widget\nmetadata:\n  name: applied-fv\n"
	out, err := apply(head+"unknownField: x\nspec:\n  size: small\n", "Strict")
	if !apierrors.IsBadRequest(err) || !strings.Contains(out, ".unknownField: field not declared in schema") {
		t.Fatalf("unknown field under Strict: %v %s", err, out)
	}
	out, err = apply(head+"spec:\n  size: small\n  size: large\n", "Strict")
	if !apierrors.IsBadRequest(err) || !strings.Contains(out, `line 7: key \"size\" already set in map`) {
		t.Fatalf("duplicate key under Strict: %v %s", err, out)
	}
	if _, err := apply(head+"unknownField: x\nspec:\n  size: small\n", "Warn"); err != nil {
		t.Fatalf("unknown field under Warn: %v", err)
	}
}

// testWidgetApplyListMap: server-side apply types a custom resource by its
// schema, as upstream does: two managers' entries of an
// x-kubernetes-list-type map list are merged by key (deduced types would
// make the list atomic and the second apply a conflict), and changing
// another manager's entry is a conflict naming it.
func testWidgetApplyListMap(t *testing.T, s *testutil.Server, group, ns string) {
	apply := func(manager, body string) (string, error) {
		res := s.Clientset.Discovery().RESTClient().Patch(types.ApplyPatchType).
			AbsPath("/apis", group, "v1", "namespaces", ns, "widgets", "ports").
			Param("fieldManager", manager).Body([]byte(body)).Do(ctxT(t))
		raw, _ := res.Raw()
		return string(raw), res.Error()
	}
	head := "apiVersion: " + group + "/v1\nkind: Widget\nmetadata:\n  name: ports\nspec:\n  size: small\n  ports:\n"
	if out, err := apply("a", head+"  - name: http\n    port: 80\n"); err != nil {
		t.Fatalf("first apply: %v %s", err, out)
	}
	out, err := apply("b", head+"  - name: metrics\n    port: 9090\n")
	if err != nil {
		t.Fatalf("second manager's entry: %v %s", err, out)
	}
	if !strings.Contains(out, `"name":"http"`) || !strings.Contains(out, `"name":"metrics"`) {
		t.Fatalf("entries not merged by key: %s", out)
	}
	out, err = apply("b", head+"  - name: metrics\n    port: 9090\n  - name: http\n    port: 8080\n")
	if !apierrors.IsConflict(err) || !strings.Contains(out, `.spec.ports[name=\"http\"].port`) {
		t.Fatalf("changing a's entry: %v %s", err, out)
	}
	out, err = apply("c", "apiVersion: "+group+"/v1\nkind: Widget\nmetadata:\n  name: ports\nspec:\n  size: small\n  replicas: many\n")
	if !apierrors.IsBadRequest(err) || !strings.Contains(out, ".spec.replicas: expected numeric") {
		t.Fatalf("a string for an integer: %v %s", err, out)
	}
}

// testWidgetOpenAPIV2: /openapi/v2 (JSON and client-go's protobuf) has
// the kind's definition next to the built-in ones, as kubectl and the
// conformance specs expect.
func testWidgetOpenAPIV2(t *testing.T, s *testutil.Server, group string) {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	name := strings.Join(parts, ".") + ".v1.Widget"
	raw, err := s.Clientset.Discovery().RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(ctxT(t))
	must(t, err, "GET /openapi/v2")
	var doc struct {
		Definitions map[string]struct {
			Properties map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"properties"`
		} `json:"definitions"`
	}
	must(t, json.Unmarshal(raw, &doc), "decode /openapi/v2")
	d, ok := doc.Definitions[name]
	if !ok || !strings.Contains(string(d.Properties["spec"].Properties["size"]), `"large"`) {
		t.Fatalf("definition %s: %+v (found %v)", name, d, ok)
	}
	if _, ok := doc.Definitions["io.k8s.api.core.v1.Pod"]; !ok {
		t.Fatal("the built-in definitions are gone from /openapi/v2")
	}
	pb, err := s.Clientset.Discovery().OpenAPISchema()
	must(t, err, "protobuf /openapi/v2")
	for _, p := range pb.GetDefinitions().GetAdditionalProperties() {
		if p.GetName() == name {
			return
		}
	}
	t.Fatalf("the protobuf document lacks %s", name)
}

func widget(group, name string, spec map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": group + "/v1", "kind": "Widget", "metadata": map[string]interface{}{"name": name}, "spec": spec}}
}

func createEstablished(t *testing.T, ext apiextclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx := ctxT(t)
	createCRD(t, ext, crd)
	waitFor(t, "CRD "+crd.Name+" Established", func() error {
		c, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if established(c) {
			return nil
		}
		return fmt.Errorf("conditions %+v", c.Status.Conditions)
	})
}

// createCRD creates crd, deleted on cleanup.
func createCRD(t *testing.T, ext apiextclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctxT(t), crd, metav1.CreateOptions{})
	must(t, err, "create CRD %s", crd.Name)
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
}

// established reports whether c's Established condition is True.
func established(c *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

func testCustomResources(t *testing.T, s *testutil.Server) {
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	group := fmt.Sprintf("it%04x.example.com", time.Now().UnixNano()&0xffff)
	createEstablished(t, ext, widgetCRD(group))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	ns := newNamespace(t, s.Clientset)
	waitFor(t, "the custom resource to be served", func() error {
		_, err := dyn.Resource(gvr).Namespace(ns).List(ctxT(t), metav1.ListOptions{})
		return err
	})
	wi := dyn.Resource(gvr).Namespace(ns)
	t.Run("discovery", func(t *testing.T) {
		l, err := s.Clientset.Discovery().ServerResourcesForGroupVersion(group + "/v1")
		must(t, err, "discovery")
		r := l.APIResources[0]
		if r.Name != "widgets" || r.Kind != "Widget" || !r.Namespaced || r.ShortNames[0] != "wdg" || r.Categories[0] != "all" {
			t.Fatalf("discovery: %+v", l.APIResources)
		}
	})
	t.Run("crud and defaults", func(t *testing.T) { testWidgetCRUD(t, wi, group) })
	t.Run("schema errors", func(t *testing.T) { testWidgetSchemaErrors(t, wi, group) })
	t.Run("status and scale", func(t *testing.T) { testWidgetSubresources(t, wi, group) })
	t.Run("selectors and watch", func(t *testing.T) { testWidgetSelectors(t, wi, group) })
	t.Run("table", func(t *testing.T) { testWidgetTable(t, s, group, ns) })
	t.Run("openapi v2", func(t *testing.T) { testWidgetOpenAPIV2(t, s, group) })
	t.Run("apply field validation", func(t *testing.T) { testWidgetApplyValidation(t, s, group, ns) })
	t.Run("apply merges list-map entries", func(t *testing.T) { testWidgetApplyListMap(t, s, group, ns) })
	t.Run("bad CRDs", func(t *testing.T) { testBadCRDs(t, ext, group) })
	t.Run("delete CRD", func(t *testing.T) { testDeleteCRD(t, ext, dyn, ns) })
	t.Run("cluster scope and two versions", func(t *testing.T) { testClusterTwoVersions(t, ext, dyn, group) })
}

// testClusterTwoVersions: a cluster-scoped CRD serving v1 (storage) and v2
// with None conversion: what is written through one version reads through
// the other with its apiVersion.
func testClusterTwoVersions(t *testing.T, ext apiextclient.Interface, dyn dynamic.Interface, group string) {
	ctx := ctxT(t)
	crd := widgetCRD(group)
	crd.Name, crd.Spec.Names = "gizmos."+group, apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Kind: "Gizmo"}
	crd.Spec.Scope = apiextensionsv1.ClusterScoped
	v2 := *crd.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage = "v2", false
	crd.Spec.Versions = append(crd.Spec.Versions, v2)
	createEstablished(t, ext, crd)
	v1r := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gizmos"})
	v2r := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v2", Resource: "gizmos"})
	g := widget(group, "g1", map[string]interface{}{"size": "large"})
	g.SetAPIVersion(group + "/v2")
	g.SetKind("Gizmo")
	waitFor(t, "v2 served", func() error {
		_, err := v2r.Create(ctx, g, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = v1r.Delete(context.Background(), "g1", metav1.DeleteOptions{}) })
	got, err := v1r.Get(ctx, "g1", metav1.GetOptions{})
	must(t, err, "get through v1")
	if got.GetAPIVersion() != group+"/v1" || got.GetNamespace() != "" {
		t.Fatalf("read through v1: apiVersion %q namespace %q", got.GetAPIVersion(), got.GetNamespace())
	}
}

func testWidgetCRUD(t *testing.T, wi dynamic.ResourceInterface, group string) {
	ctx := ctxT(t)
	got, err := wi.Create(ctx, widget(group, "a", map[string]interface{}{"size": "small", "port": "http"}), metav1.CreateOptions{})
	must(t, err, "create widget")
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 1 || got.GetGeneration() != 1 || got.GetUID() == "" {
		t.Fatalf("created widget: replicas default %d, generation %d, uid %q", r, got.GetGeneration(), got.GetUID())
	}
	must(t, unstructured.SetNestedField(got.Object, "large", "spec", "size"), "set")
	upd, err := wi.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "update widget")
	if upd.GetGeneration() != 2 {
		t.Fatalf("generation after a spec change: %d", upd.GetGeneration())
	}
	stale := got.DeepCopy()
	_, err = wi.Update(ctx, stale, metav1.UpdateOptions{})
	wantCode(t, err, 409, "update with a stale resourceVersion")
	_, err = wi.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"port":8080}}`), metav1.PatchOptions{})
	must(t, err, "merge patch")
	_, err = wi.Patch(ctx, "a", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/size","value":"small"}]`), metav1.PatchOptions{})
	must(t, err, "json patch")
	_, err = wi.Patch(ctx, "a", types.StrategicMergePatchType, []byte(`{"spec":{"size":"large"}}`), metav1.PatchOptions{})
	wantCode(t, err, 415, "strategic merge patch of a custom resource")
	applied, err := wi.Apply(ctx, "applied", widget(group, "applied", map[string]interface{}{"size": "large"}), metav1.ApplyOptions{FieldManager: "op"})
	must(t, err, "server-side apply of a custom resource")
	if len(applied.GetManagedFields()) == 0 || applied.GetManagedFields()[0].Manager != "op" {
		t.Fatalf("managedFields of an applied custom resource: %+v", applied.GetManagedFields())
	}
	_, err = wi.Apply(ctx, "applied", widget(group, "applied", map[string]interface{}{"size": "small"}), metav1.ApplyOptions{FieldManager: "other"})
	wantCode(t, err, 409, "conflicting apply of a custom resource")
}

func testWidgetSchemaErrors(t *testing.T, wi dynamic.ResourceInterface, group string) {
	ctx := ctxT(t)
	_, err := wi.Create(ctx, widget(group, "bad-enum", map[string]interface{}{"size": "huge"}), metav1.CreateOptions{})
	wantField(t, err, "spec.size")
	_, err = wi.Create(ctx, widget(group, "no-size", map[string]interface{}{"replicas": 2}), metav1.CreateOptions{})
	wantField(t, err, "spec.size")
	_, err = wi.Create(ctx, widget(group, "neg", map[string]interface{}{"size": "small", "replicas": -1}), metav1.CreateOptions{})
	wantField(t, err, "spec.replicas")
	_, err = wi.Create(ctx, widget(group, "wrong-type", map[string]interface{}{"size": "small", "replicas": "two"}), metav1.CreateOptions{})
	wantField(t, err, "spec.replicas")
	_, err = wi.Create(ctx, widget(group, "unknown", map[string]interface{}{"size": "small", "extra": 1}),
		metav1.CreateOptions{FieldValidation: "Strict"})
	if st := wantCode(t, err, 400, "unknown field under Strict"); !strings.Contains(st.Message, `unknown field "spec.extra"`) {
		t.Fatalf("message %q", st.Message)
	}
	got, err := wi.Create(ctx, widget(group, "pruned", map[string]interface{}{"size": "small", "extra": 1}),
		metav1.CreateOptions{FieldValidation: "Ignore"})
	must(t, err, "create with an unknown field, Ignore")
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "extra"); found {
		t.Fatal("unknown field spec.extra was stored, not pruned")
	}
	if _, err := wi.Get(ctx, "bad-enum", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a rejected widget exists: %v", err)
	}
}

func testWidgetSubresources(t *testing.T, wi dynamic.ResourceInterface, group string) {
	ctx := ctxT(t)
	w, err := wi.Create(ctx, widget(group, "sub", map[string]interface{}{"size": "small"}), metav1.CreateOptions{})
	must(t, err, "create")
	w.Object["status"] = map[string]interface{}{"replicas": int64(4)}
	must(t, unstructured.SetNestedField(w.Object, "large", "spec", "size"), "set")
	st, err := wi.UpdateStatus(ctx, w, metav1.UpdateOptions{})
	must(t, err, "update status")
	if size, _, _ := unstructured.NestedString(st.Object, "spec", "size"); size != "small" {
		t.Fatalf("a status update changed spec.size to %q", size)
	}
	st.Object["status"] = map[string]interface{}{"replicas": int64(9)}
	main, err := wi.Update(ctx, st, metav1.UpdateOptions{})
	must(t, err, "update")
	if r, _, _ := unstructured.NestedInt64(main.Object, "status", "replicas"); r != 4 {
		t.Fatalf("a main update changed status.replicas to %d", r)
	}
	sc, err := wi.Get(ctx, "sub", metav1.GetOptions{}, "scale")
	must(t, err, "get scale")
	if sr, _, _ := unstructured.NestedInt64(sc.Object, "status", "replicas"); sc.GetKind() != "Scale" || sr != 4 {
		t.Fatalf("scale %+v", sc.Object)
	}
	must(t, unstructured.SetNestedField(sc.Object, int64(5), "spec", "replicas"), "set")
	_, err = wi.Update(ctx, sc, metav1.UpdateOptions{}, "scale")
	must(t, err, "update scale")
	got, _ := wi.Get(ctx, "sub", metav1.GetOptions{})
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 5 {
		t.Fatalf("spec.replicas after scaling: %d", r)
	}
}

func testWidgetSelectors(t *testing.T, wi dynamic.ResourceInterface, group string) {
	ctx := ctxT(t)
	w, err := wi.Watch(ctx, metav1.ListOptions{LabelSelector: "team=blue"})
	must(t, err, "watch")
	defer w.Stop()
	for i, color := range []string{"red", "blue"} {
		o := widget(group, fmt.Sprintf("sel-%d", i), map[string]interface{}{"size": "small", "color": color})
		o.SetLabels(map[string]string{"team": color})
		_, err := wi.Create(ctx, o, metav1.CreateOptions{})
		must(t, err, "create sel-%d", i)
	}
	l, err := wi.List(ctx, metav1.ListOptions{LabelSelector: "team=blue"})
	must(t, err, "list by label")
	if len(l.Items) != 1 || l.Items[0].GetName() != "sel-1" {
		t.Fatalf("label selector: %d items", len(l.Items))
	}
	l, err = wi.List(ctx, metav1.ListOptions{FieldSelector: "spec.color=red"})
	must(t, err, "list by selectable field")
	if len(l.Items) != 1 || l.Items[0].GetName() != "sel-0" {
		t.Fatalf("selectable field selector: %d items", len(l.Items))
	}
	l, err = wi.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=sel-0"})
	must(t, err, "list by name")
	if len(l.Items) != 1 {
		t.Fatalf("metadata.name selector: %d items", len(l.Items))
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "sel-1" {
			t.Fatalf("watch event %s %v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event for the blue widget")
	}
}

func testWidgetTable(t *testing.T, s *testutil.Server, group, ns string) {
	body, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath("/apis/"+group+"/v1/namespaces/"+ns+"/widgets").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctxT(t))
	must(t, err, "table request")
	for _, want := range []string{`"name":"Size"`, `"name":"Replicas"`, `"kind":"Table"`, `"sub"`} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("table lacks %s: %.400s", want, body)
		}
	}
}

func testBadCRDs(t *testing.T, ext apiextclient.Interface, group string) {
	ctx := ctxT(t)
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	bad := widgetCRD("bad." + group)
	bad.Name = "gadgets.bad." + group
	_, err := crds.Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "metadata.name")
	bad = widgetCRD("bad." + group)
	bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = apiextensionsv1.JSONSchemaProps{
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": {Type: "string"}}}
	_, err = crds.Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "spec.versions[0].schema.openAPIV3Schema.properties[spec].type")
	bad = widgetCRD("bad." + group)
	bad.Spec.Versions = append(bad.Spec.Versions, bad.Spec.Versions[0])
	bad.Spec.Versions[1].Name = "v2"
	_, err = crds.Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "spec.versions")
	if _, err := crds.Get(ctx, "widgets.bad."+group, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a rejected CRD exists: %v", err)
	}
}

func testDeleteCRD(t *testing.T, ext apiextclient.Interface, dyn dynamic.Interface, ns string) {
	ctx := ctxT(t)
	group := fmt.Sprintf("del%04x.example.com", time.Now().UnixNano()&0xffff)
	createEstablished(t, ext, widgetCRD(group))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	waitFor(t, "served", func() error {
		_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, widget(group, "doomed", map[string]interface{}{"size": "small"}), metav1.CreateOptions{})
		return err
	})
	must(t, ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "widgets."+group, metav1.DeleteOptions{}), "delete CRD")
	waitFor(t, "the CRD and its objects to go", func() error {
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "widgets."+group, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("CRD still there: %v", err)
		}
		return nil
	})
	_, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "doomed", metav1.GetOptions{})
	wantCode(t, err, 404, "a custom resource of a deleted CRD")
}

// TestCustomResourceGarbageCollection: a custom resource owned by a
// ConfigMap is collected when the ConfigMap goes, and a ConfigMap owned by
// a custom resource when that goes (controllers on; the collector picks up
// the new resource on its next discovery, within 30 s).
func TestCustomResourceGarbageCollection(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-agent"}})
	ctx := ctxT(t)
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	group := "gc.example.com"
	createEstablished(t, ext, widgetCRD(group))
	ns := newNamespace(t, s.Clientset)
	wi := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	owner, err := s.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	must(t, err, "owner configmap")
	w := widget(group, "owned", map[string]interface{}{"size": "small"})
	w.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}})
	waitFor(t, "the custom resource to be served", func() error {
		_, err := wi.Create(ctx, w, metav1.CreateOptions{})
		return err
	})
	parent, err := wi.Create(ctx, widget(group, "parent", map[string]interface{}{"size": "large"}), metav1.CreateOptions{})
	must(t, err, "parent widget")
	_, err = s.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: group + "/v1", Kind: "Widget", Name: "parent", UID: parent.GetUID()}}}}, metav1.CreateOptions{})
	must(t, err, "child configmap")
	must(t, s.Clientset.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}), "delete owner")
	must(t, wi.Delete(ctx, "parent", metav1.DeleteOptions{}), "delete parent")
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, err1 := wi.Get(ctx, "owned", metav1.GetOptions{})
		_, err2 := s.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
		if apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dependents not collected: widget %v, configmap %v", err1, err2)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
