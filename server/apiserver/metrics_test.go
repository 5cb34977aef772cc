package apiserver

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/orch/orch/internal/metrics"
	"github.com/orch/orch/internal/metrics/metricstest"
)

func TestRequestMetrics(t *testing.T) {
	reg := metrics.NewRegistry()
	e := newAPIEnv(t, 100, func(c *Config) { c.Metrics = reg })
	e.createNamespace("ns1")
	e.must(200, "GET", "/api/v1/namespaces/ns1/configmaps", "")
	e.must(200, "GET", "/api/v1/namespaces/ns1/configmaps", "")
	e.do("GET", "/api/v1/namespaces/ns1/configmaps/missing", "")
	e.do("GET", "/apis/nosuch.example.com/v1/widgets-abc123", "")
	e.do("GET", "/healthz/etcd", "")
	e.do("GET", "/random/path/xyz", "")
	r := e.do("GET", "/metrics", "")
	if r.code != 200 {
		t.Fatalf("GET /metrics: %d %s", r.code, r.body)
	}
	fams, err := metricstest.Parse(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		labels map[string]string
		value  float64
	}{
		{map[string]string{"verb": "LIST", "resource": "configmaps", "version": "v1", "group": "", "scope": "namespace", "code": "200", "component": "apiserver"}, 2},
		{map[string]string{"verb": "GET", "resource": "configmaps", "scope": "resource", "code": "404"}, 1},
		{map[string]string{"verb": "POST", "resource": "namespaces", "scope": "resource", "code": "201"}, 1},
		// an unknown group collapses: no group, version or resource
		{map[string]string{"verb": "LIST", "group": "", "version": "", "resource": "", "scope": "cluster", "code": "404"}, 1},
		{map[string]string{"verb": "GET", "subresource": "/healthz", "code": "404"}, 1}, // no such check here
		{map[string]string{"verb": "GET", "subresource": "other", "code": "404"}, 1},
	}
	for _, w := range want {
		s, ok := fams.Find("apiserver_request_total", w.labels)
		if !ok {
			t.Errorf("apiserver_request_total%v missing: %v", w.labels, fams.Samples("apiserver_request_total"))
			continue
		}
		if s.Value != w.value {
			t.Errorf("apiserver_request_total%v = %v, want %v", w.labels, s.Value, w.value)
		}
	}
	for _, s := range fams.Samples("apiserver_request_total") {
		if s.Labels["group"] == "nosuch.example.com" || s.Labels["resource"] == "widgets-abc123" {
			t.Errorf("unbounded label kept: %v", s.Labels)
		}
	}
	if _, ok := fams.Find("apiserver_request_duration_seconds", map[string]string{"verb": "LIST", "resource": "configmaps"}); !ok {
		t.Errorf("apiserver_request_duration_seconds missing; have %s", fams.Names())
	}
	if _, ok := fams.Find("apiserver_current_inflight_requests", map[string]string{"request_kind": "readOnly"}); !ok {
		t.Error("apiserver_current_inflight_requests missing")
	}
	if fams["go_goroutines"] == nil {
		t.Error("go collector missing")
	}
}

func TestMetricLabels(t *testing.T) {
	cases := []struct {
		method, path, ctype string
		known               bool
		want                metricLabels
	}{
		{"GET", "/api/v1/pods?watch=true", "", true, metricLabels{verb: "WATCH", version: "v1", resource: "pods", scope: "cluster"}},
		{"PATCH", "/apis/apps/v1/namespaces/a/deployments/d", "application/apply-patch+yaml", true,
			metricLabels{verb: "APPLY", group: "apps", version: "v1", resource: "deployments", scope: "resource"}},
		{"POST", "/api/v1/namespaces/a/pods/p/exec", "", true,
			metricLabels{verb: "CONNECT", version: "v1", resource: "pods", subresource: "exec", scope: "resource"}},
		{"PUT", "/api/v1/namespaces/a/pods/p/weird", "", true,
			metricLabels{verb: "PUT", version: "v1", resource: "pods", subresource: "other", scope: "resource"}},
		{"DELETE", "/api/v1/namespaces/a/pods", "", true,
			metricLabels{verb: "DELETECOLLECTION", version: "v1", resource: "pods", scope: "namespace"}},
		{"POST", "/api/v1/namespaces/a/pods?dryRun=All", "", true,
			metricLabels{verb: "POST", dryRun: "All", version: "v1", resource: "pods", scope: "resource"}},
		{"GET", "/apis/x.io/v1/things", "", false, metricLabels{verb: "LIST", scope: "cluster"}},
		{"GET", "/openapi/v3/apis/apps/v1", "", false, metricLabels{verb: "GET", subresource: "/openapi/v3"}},
		{"OPTIONS", "/version", "", false, metricLabels{verb: "other", subresource: "/version"}},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.path, nil)
		if c.ctype != "" {
			r.Header.Set("Content-Type", c.ctype)
		}
		if got := labelsOf(r, parseRequestInfo(r), c.known); got != c.want {
			t.Errorf("%s %s: got %+v, want %+v", c.method, c.path, got, c.want)
		}
	}
}
