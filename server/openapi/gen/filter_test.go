package main

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/openapi"
	"github.com/orch/orch/server/registry"
)

func testServed() *served {
	res := []*registry.Resource{
		{GroupVersion: schema.GroupVersion{Version: "v1"}, Resource: "pods", Namespaced: true, HasStatus: true,
			Subresources: map[string]registry.SubresourceStrategy{"resize": nil}},
		{GroupVersion: schema.GroupVersion{Version: "v1"}, Resource: "namespaces", HasStatus: true},
		{GroupVersion: schema.GroupVersion{Group: "apps", Version: "v1"}, Resource: "deployments", Namespaced: true,
			Scale: &registry.ScaleAccess{}},
	}
	return newServed(res, openapi.ExtraSubresources())
}

func TestKeepPath(t *testing.T) {
	s := testServed()
	tests := []struct {
		path string
		want bool
	}{
		{"/api/", true},
		{"/api/v1/", true},
		{"/apis/", true},
		{"/apis/apps/", true},
		{"/apis/batch/", false},
		{"/apis/apps/v1/", true},
		{"/apis/batch/v1/", false},
		{"/version/", true},
		{"/logs/", false},
		{"/.well-known/openid-configuration/", false},
		{"/api/v1/pods", true},
		{"/api/v1/watch/pods", true},
		{"/api/v1/namespaces/{namespace}/pods/{name}", true},
		{"/api/v1/namespaces/{namespace}/pods/{name}/status", true},
		{"/api/v1/namespaces/{namespace}/pods/{name}/eviction", true},
		{"/api/v1/namespaces/{namespace}/pods/{name}/proxy", true},
		{"/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}", true},
		{"/api/v1/namespaces/{namespace}/services/{name}/proxy", false},
		{"/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers", false},
		{"/api/v1/namespaces/{namespace}/pods/{name}/resize", true},
		{"/api/v1/namespaces/{namespace}/bindings", false},
		{"/api/v1/namespaces", true},
		{"/api/v1/namespaces/{name}", true},
		{"/api/v1/namespaces/{name}/finalize", true},
		{"/api/v1/namespaces/{name}/status", true},
		{"/api/v1/watch/namespaces/{name}", true},
		{"/api/v1/componentstatuses", false},
		{"/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", true},
		{"/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status", false},
		{"/apis/apps/v1/namespaces/{namespace}/replicasets", false},
	}
	for _, tt := range tests {
		if got := s.keepPath(tt.path); got != tt.want {
			t.Errorf("keepPath(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestKeepV3(t *testing.T) {
	s := testServed()
	for name, want := range map[string]bool{
		"api": true, "apis": true, "version": true, "api/v1": true, "apis/apps": true, "apis/apps/v1": true,
		"apis/batch": false, "apis/batch/v1": false, "logs": false, ".well-known/openid-configuration": false,
	} {
		if got := s.keepV3(name); got != want {
			t.Errorf("keepV3(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestPrune(t *testing.T) {
	doc := map[string]any{
		"paths": map[string]any{
			"/api/v1/pods": map[string]any{"get": map[string]any{
				"parameters": []any{map[string]any{"$ref": "#/parameters/limit"}},
				"responses":  map[string]any{"200": map[string]any{"schema": map[string]any{"$ref": "#/definitions/PodList"}}},
			}},
			"/api/v1/componentstatuses": map[string]any{"get": map[string]any{
				"responses": map[string]any{"200": map[string]any{"schema": map[string]any{"$ref": "#/definitions/CSList"}}},
			}},
		},
		"parameters": map[string]any{"limit": map[string]any{"name": "limit"}, "unused": map[string]any{}},
		"definitions": map[string]any{
			"PodList": map[string]any{"properties": map[string]any{"items": map[string]any{
				"items": map[string]any{"$ref": "#/definitions/Pod"}}}},
			"Pod":    map[string]any{"properties": map[string]any{"meta": map[string]any{"$ref": "#/definitions/Meta"}}},
			"Meta":   map[string]any{},
			"CSList": map[string]any{},
		},
	}
	prune(doc, testServed().keepPath)
	defs := doc["definitions"].(map[string]any)
	for _, want := range []string{"PodList", "Pod", "Meta"} {
		if defs[want] == nil {
			t.Errorf("definition %s dropped", want)
		}
	}
	if defs["CSList"] != nil || len(defs) != 3 {
		t.Errorf("unreferenced definitions kept: %v", defs)
	}
	params := doc["parameters"].(map[string]any)
	if params["limit"] == nil || params["unused"] != nil {
		t.Errorf("parameters = %v", params)
	}
	if _, ok := doc["paths"].(map[string]any)["/api/v1/componentstatuses"]; ok {
		t.Error("unserved path kept")
	}
}
