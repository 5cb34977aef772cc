package crd

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestV2PreserveUnknownRoot: a kind whose root keeps unknown fields is a
// bare object in the v2 document (as upstream publishes a CRD without a
// real schema) and keeps its schema in v3.
func TestV2PreserveUnknownRoot(t *testing.T) {
	v := apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Served: true, Storage: true,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", XPreserveUnknownFields: boolPtr(true)}}}
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "empties.x.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "x.io", Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{v}},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: apiextensionsv1.CustomResourceDefinitionNames{
			Plural: "empties", Kind: "Empty", ListKind: "EmptyList"}}}
	doc, err := versionDoc(c, v)
	if err != nil {
		t.Fatal(err)
	}
	kind := doc.v2defs["io.x.v1.Empty"].(map[string]any)
	if len(kind) != 2 || kind["type"] != "object" || kind["x-kubernetes-group-version-kind"] == nil {
		t.Errorf("v2 definition %v", kind)
	}
	if _, ok := doc.v2defs["io.x.v1.EmptyList"]; !ok {
		t.Error("v2 lacks the list")
	}
	v3 := doc.schemas["io.x.v1.Empty"].(map[string]any)
	if v3["x-kubernetes-preserve-unknown-fields"] != true || v3["properties"] == nil {
		t.Errorf("v3 definition %v", v3)
	}
}
