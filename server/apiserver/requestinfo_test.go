package apiserver

import (
	"net/http/httptest"
	"testing"
)

func TestSelectedNameAuthorizes(t *testing.T) {
	for _, c := range []struct{ url, verb, name string }{
		{"/api/v1/namespaces/ns/secrets?fieldSelector=metadata.name%3Dca", "list", "ca"},
		{"/api/v1/namespaces/ns/secrets?watch=1&fieldSelector=metadata.name%3D%3Dca", "watch", "ca"},
		{"/api/v1/namespaces/ns/secrets?fieldSelector=metadata.name%21%3Dca", "list", ""},
		{"/api/v1/namespaces/ns/secrets?fieldSelector=metadata.namespace%3Dns", "list", ""},
		{"/api/v1/namespaces/ns/secrets?fieldSelector=metadata.name%3D..", "list", ""},
		{"/api/v1/namespaces/ns/secrets/x?fieldSelector=metadata.name%3Dca", "get", "x"},
	} {
		info := parseRequestInfo(httptest.NewRequest("GET", c.url, nil))
		a := info.attributes(nil)
		if info.Verb != c.verb || a.Name != c.name || (info.Verb != "get" && info.Name != "") {
			t.Errorf("%s: verb %s, authorized name %q, routed name %q", c.url, info.Verb, a.Name, info.Name)
		}
	}
}
