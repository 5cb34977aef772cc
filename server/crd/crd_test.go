package crd

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testSchema(t *testing.T) *Schema {
	t.Helper()
	s, err := NewSchema(&apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Required: []string{"size"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"size":  {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"s"`)}, {Raw: []byte(`"l"`)}}},
			"count": {Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte("3")}},
			"tags": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"on": {Type: "boolean", Default: &apiextensionsv1.JSON{Raw: []byte("true")}}}}}},
			"port": {XIntOrString: true},
			"free": {Type: "object", XPreserveUnknownFields: boolPtr(true)},
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func boolPtr(b bool) *bool { return &b }

func TestDefaultPruneValidate(t *testing.T) {
	s := testSchema(t)
	obj := map[string]interface{}{"apiVersion": "x.io/v1", "kind": "K", "metadata": map[string]interface{}{"name": "a"},
		"spec": map[string]interface{}{"size": "s", "junk": 1, "tags": []interface{}{map[string]interface{}{}},
			"free": map[string]interface{}{"anything": "kept"}}}
	unknown := s.Prune(obj)
	if len(unknown) != 1 || unknown[0] != "spec.junk" {
		t.Fatalf("pruned %v, want [spec.junk]", unknown)
	}
	Default(obj, s.Structural)
	spec := obj["spec"].(map[string]interface{})
	if spec["count"] != int64(3) && spec["count"] != float64(3) {
		t.Fatalf("count default: %#v", spec["count"])
	}
	if spec["tags"].([]interface{})[0].(map[string]interface{})["on"] != true {
		t.Fatalf("item default: %#v", spec["tags"])
	}
	if spec["free"].(map[string]interface{})["anything"] != "kept" {
		t.Fatal("a preserved field was pruned")
	}
	if errs := s.Validate(context.Background(), obj, nil); len(errs) != 0 {
		t.Fatalf("valid object: %v", errs)
	}
	for _, tc := range []struct {
		field string
		val   interface{}
		want  string
	}{
		{"size", "xl", "spec.size"},
		{"count", "many", "spec.count"},
		{"port", true, "spec.port"},
	} {
		bad := map[string]interface{}{"spec": map[string]interface{}{"size": "s", tc.field: tc.val}}
		errs := s.Validate(context.Background(), bad, nil)
		if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want) {
			t.Errorf("%s=%v: errors %v, want one naming %s", tc.field, tc.val, errs, tc.want)
		}
	}
	if errs := s.Validate(context.Background(), map[string]interface{}{"spec": map[string]interface{}{"port": 80}}, nil); len(errs) == 0 {
		t.Error("missing required spec.size accepted")
	}
}

func TestAcceptNames(t *testing.T) {
	mk := func(name, kind string, short ...string) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name + ".x.io"}}
		c.Spec.Group = "x.io"
		c.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: name, Kind: kind, ListKind: kind + "List", ShortNames: short}
		c.Status.AcceptedNames = withSingular(c.Spec.Names)
		return c
	}
	first := mk("foos", "Foo", "f")
	all := []*apiextensionsv1.CustomResourceDefinition{first}
	if ok, _, _ := acceptNames(mk("bars", "Bar"), all); !ok {
		t.Error("distinct names refused")
	}
	sameKind := mk("foobars", "Foo")
	sameKind.Spec.Names.Singular = "foobar"
	if ok, reason, _ := acceptNames(sameKind, all); ok || reason != "KindConflict" {
		t.Errorf("kind conflict: %v %s", ok, reason)
	}
	if ok, reason, _ := acceptNames(mk("bazs", "Baz", "f"), all); ok || reason != "ShortNamesConflict" {
		t.Errorf("short name conflict: %v %s", ok, reason)
	}
}

func TestDefinitionName(t *testing.T) {
	if got := definitionName("stable.example.com", "v1", "CronTab"); got != "com.example.stable.v1.CronTab" {
		t.Fatal(got)
	}
}
