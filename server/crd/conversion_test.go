package crd

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestConversionAccept(t *testing.T) {
	w := &webhookConverter{}
	to := schema.GroupVersion{Group: "g", Version: "v2"}
	orig := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "g/v1", "kind": "K",
			"metadata": map[string]interface{}{"name": "n", "uid": "u", "labels": map[string]interface{}{"a": "1"}}, "spec": "old"}}
	}
	for _, c := range []struct {
		name, converted, err string
	}{
		{"restores metadata, keeps labels and spec", `{"apiVersion":"g/v2","kind":"K","metadata":{"name":"x","uid":"y","labels":{"b":"2"}},"spec":"new"}`, ""},
		{"wrong apiVersion", `{"apiVersion":"g/v1","kind":"K","metadata":{}}`, `apiVersion "g/v1", expected "g/v2"`},
		{"wrong kind", `{"apiVersion":"g/v2","kind":"L","metadata":{}}`, `kind "L"`},
		{"no metadata", `{"apiVersion":"g/v2","kind":"K"}`, "missing metadata"},
		{"labels not strings", `{"apiVersion":"g/v2","kind":"K","metadata":{"labels":{"a":1}}}`, "metadata.labels"},
		{"invalid label", `{"apiVersion":"g/v2","kind":"K","metadata":{"labels":{"a b":"1"}}}`, "metadata.labels"},
		{"not JSON", `{`, "unexpected"},
	} {
		u := orig()
		err := w.accept(u, runtime.RawExtension{Raw: []byte(c.converted)}, to)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			if u.GetAPIVersion() != "g/v1" {
				t.Errorf("%s: the object changed on error", c.name)
			}
			continue
		}
		if err != nil || u.GetName() != "n" || string(u.GetUID()) != "u" || u.GetLabels()["b"] != "2" || u.GetLabels()["a"] != "" ||
			u.Object["spec"] != "new" || u.GetAPIVersion() != "g/v2" {
			t.Errorf("%s: %v %v", c.name, err, u.Object)
		}
	}
}

func TestDecodeConversion(t *testing.T) {
	req := &apiextensionsv1.ConversionRequest{UID: "1"}
	for _, c := range []struct{ body, err string }{
		{`{"response":{"uid":"1","result":{"status":"Success"},"convertedObjects":[{}]}}`, ""},
		{`{}`, "no response"},
		{`{"response":{"uid":"2","result":{"status":"Success"}}}`, `expected response.uid="1"`},
		{`{"response":{"uid":"1","result":{"status":"Failure","message":"nope"}}}`, "conversion failed: nope"},
		{`{"response":{"uid":"1","result":{"status":"Success"},"convertedObjects":[]}}`, "expected 1 converted objects, got 0"},
		{`garbage`, "invalid ConversionReview"},
	} {
		_, err := decodeConversion([]byte(c.body), req, 1)
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.body, err, c.err)
		}
	}
}
