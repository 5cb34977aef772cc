package apiserver

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDecodeTypedJSON(t *testing.T) {
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	cases := []struct {
		name, body string
		strict     bool
		want       schema.GroupVersionKind
		strictErr  string // a strict decoding error holding this, with the object
		fatal      string // a decoding error holding this, without an object
	}{
		{name: "full", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, strict: true, want: cm},
		{name: "defaults", body: `{"metadata":{"name":"a"}}`, strict: true, want: cm},
		{name: "other kind kept", body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}`, strict: true,
			want: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}},
		{name: "other group kept", body: `{"apiVersion":"apps/v1","metadata":{"name":"a"}}`, strict: true,
			want: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ConfigMap"}},
		{name: "unknown field", body: `{"metadata":{"name":"a"},"spec":1}`, strict: true, want: cm, strictErr: `unknown field "spec"`},
		{name: "duplicate field", body: `{"metadata":{"name":"a"},"data":{},"data":{}}`, strict: true, want: cm, strictErr: `duplicate field "data"`},
		{name: "unknown field ignored", body: `{"metadata":{"name":"a"},"spec":1}`, want: cm},
		{name: "wrong type", body: `{"metadata":{"name":5}}`, strict: true, fatal: "cannot unmarshal number"},
		{name: "not an object", body: `[1]`, strict: true, fatal: "cannot unmarshal array"},
		{name: "malformed", body: `{"metadata":`, strict: true, fatal: "unexpected end of JSON input"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj, gvk, err := decodeTypedJSON([]byte(c.body), c.strict, cm, &corev1.ConfigMap{})
			switch {
			case c.fatal != "":
				if err == nil || obj != nil || !strings.Contains(err.Error(), c.fatal) {
					t.Fatalf("got %v, %v; want an error with %q and no object", obj, err, c.fatal)
				}
				return
			case c.strictErr != "":
				if !runtime.IsStrictDecodingError(err) || obj == nil || !strings.Contains(err.Error(), c.strictErr) {
					t.Fatalf("got %v, %v; want a strict decoding error with %q and the object", obj, err, c.strictErr)
				}
			case err != nil:
				t.Fatal(err)
			}
			if *gvk != c.want {
				t.Fatalf("kind %v, want %v", *gvk, c.want)
			}
			if name := obj.(*corev1.ConfigMap).Name; name != "a" {
				t.Fatalf("name %q", name)
			}
		})
	}
}
