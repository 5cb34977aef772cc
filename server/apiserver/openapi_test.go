package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestOpenAPIRoutes(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	metaDecode(t, metaGet(t, s, "/openapi/v3", ""), &idx)
	for _, want := range []string{"api/v1", "apis/apps/v1", "apis/apps", "api", "apis", "version"} {
		if idx.Paths[want].ServerRelativeURL == "" {
			t.Errorf("v3 index lacks %s", want)
		}
	}
	inProcess, err := s.OpenAPIV3Paths()
	if err != nil || len(inProcess) != len(idx.Paths) {
		t.Fatalf("OpenAPIV3Paths: %d paths, %v; the index has %d", len(inProcess), err, len(idx.Paths))
	}
	for name, u := range inProcess {
		if idx.Paths[name].ServerRelativeURL != u {
			t.Errorf("OpenAPIV3Paths %s = %q, the index has %q", name, u, idx.Paths[name].ServerRelativeURL)
		}
	}
	rec := metaGet(t, s, idx.Paths["apis/batch/v1"].ServerRelativeURL, "application/json")
	if rec.Code != http.StatusOK || !json.Valid(rec.Body.Bytes()) || rec.Header().Get("Cache-Control") != "public, immutable" {
		t.Errorf("batch/v1: %d %v", rec.Code, rec.Header())
	}
	if rec := metaGet(t, s, "/openapi/v3/apis/resource.k8s.io/v1beta2", ""); rec.Code != http.StatusNotFound {
		t.Errorf("unserved v3 document: %d", rec.Code)
	}
	if rec := metaGet(t, s, "/openapi/v2", "application/json"); rec.Code != http.StatusOK || !json.Valid(rec.Body.Bytes()) {
		t.Errorf("v2 JSON: %d", rec.Code)
	}
	if rec := metaGet(t, s, "/openapi/v2", "text/html"); rec.Code != http.StatusNotAcceptable {
		t.Errorf("v2 text/html: %d", rec.Code)
	}
}

// TestOpenAPIv3FollowsResources leaves out group versions the server does not serve.
func TestOpenAPIv3FollowsResources(t *testing.T) {
	s, _ := newMetaTestServer(t, func(c *Config) {
		var keep = c.Resources[:0]
		for _, r := range c.Resources {
			if r.GroupVersion.Group != "batch" {
				keep = append(keep, r)
			}
		}
		c.Resources = keep
	})
	var idx struct {
		Paths map[string]any `json:"paths"`
	}
	metaDecode(t, metaGet(t, s, "/openapi/v3", ""), &idx)
	if _, ok := idx.Paths["apis/batch/v1"]; ok {
		t.Error("batch/v1 listed though not served")
	}
	if _, ok := idx.Paths["apis/batch"]; ok {
		t.Error("batch listed though not served")
	}
}
