package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("CustomResourceCEL", testCustomResourceCEL)
}

// rangeCRD has spec.min/max with CEL rules: min <= max (with a
// messageExpression), an immutable spec.zone (a transition rule) and a
// rule on status.
func rangeCRD(group string, specRules ...apiextensionsv1.ValidationRule) *apiextensionsv1.CustomResourceDefinition {
	integer := apiextensionsv1.JSONSchemaProps{Type: "integer"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "ranges." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "ranges", Singular: "range", Kind: "Range"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", XValidations: specRules, Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"min": integer, "max": integer,
							"zone": {Type: "string", XValidations: apiextensionsv1.ValidationRules{{Rule: "self == oldSelf", Message: "zone is immutable"}}},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"count": {Type: "integer",
							XValidations: apiextensionsv1.ValidationRules{{Rule: "self >= 0", Message: "count must not be negative"}}}}},
					}}}}},
		},
	}
}

// testCustomResourceCEL: a CRD's x-kubernetes-validations are compiled
// when it is written (errors name the rule's path) and enforced on its
// objects — create, update (transition rules), patch and status.
func testCustomResourceCEL(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	group := fmt.Sprintf("cel%04x.example.com", time.Now().UnixNano()&0xffff)
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()

	_, err = crds.Create(ctx, rangeCRD(group, apiextensionsv1.ValidationRule{Rule: "self.min <="}), metav1.CreateOptions{})
	wantField(t, err, "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule")
	_, err = crds.Create(ctx, rangeCRD(group, apiextensionsv1.ValidationRule{Rule: "self.nosuch > 0"}), metav1.CreateOptions{})
	wantField(t, err, "x-kubernetes-validations[0].rule")
	if _, err := crds.Get(ctx, "ranges."+group, metav1.GetOptions{}); err == nil {
		t.Fatal("a CRD with a rule that does not compile was stored")
	}

	createEstablished(t, ext, rangeCRD(group, apiextensionsv1.ValidationRule{Rule: "self.min <= self.max",
		MessageExpression: "'min (' + string(self.min) + ') must not exceed max (' + string(self.max) + ')'",
		FieldPath:         ".min", Reason: ptr.To(apiextensionsv1.FieldValueForbidden)}))
	ns := newNamespace(t, s.Clientset)
	ranges := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "ranges"}).Namespace(ns)
	obj := func(name string, min, max int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": group + "/v1", "kind": "Range",
			"metadata": map[string]interface{}{"name": name}, "spec": map[string]interface{}{"min": min, "max": max, "zone": "a"}}}
	}
	waitFor(t, "ranges served", func() error {
		_, err := ranges.Create(ctx, obj("ok", 1, 2), metav1.CreateOptions{})
		return err
	})
	_, err = ranges.Create(ctx, obj("bad", 5, 2), metav1.CreateOptions{})
	st := wantCode(t, err, 422, "a Range with min > max")
	if !strings.Contains(st.Message, "spec.min: Forbidden: min (5) must not exceed max (2)") {
		t.Fatalf("message %q", st.Message)
	}
	_, err = ranges.Patch(ctx, "ok", types.MergePatchType, []byte(`{"spec":{"max":0}}`), metav1.PatchOptions{})
	wantField(t, err, "spec.min")
	_, err = ranges.Patch(ctx, "ok", types.MergePatchType, []byte(`{"spec":{"zone":"b"}}`), metav1.PatchOptions{})
	if st := wantCode(t, err, 422, "changing an immutable zone"); !strings.Contains(st.Message, "zone is immutable") {
		t.Fatalf("message %q", st.Message)
	}
	_, err = ranges.Patch(ctx, "ok", types.MergePatchType, []byte(`{"spec":{"max":9}}`), metav1.PatchOptions{})
	must(t, err, "a valid patch")
	_, err = ranges.Patch(ctx, "ok", types.MergePatchType, []byte(`{"status":{"count":-1}}`), metav1.PatchOptions{}, "status")
	if st := wantCode(t, err, 422, "a negative status count"); !strings.Contains(st.Message, "count must not be negative") {
		t.Fatalf("message %q", st.Message)
	}
	got, err := ranges.Get(ctx, "ok", metav1.GetOptions{})
	must(t, err, "get")
	if max, _, _ := unstructured.NestedInt64(got.Object, "spec", "max"); max != 9 {
		t.Fatalf("stored: %v", got.Object)
	}
}
