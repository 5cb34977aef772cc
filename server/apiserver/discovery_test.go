package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

func metaDecode(t *testing.T, rec *httptest.ResponseRecorder, into any) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("code %d: %s", rec.Code, rec.Body.String())
	}
	if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
		t.Fatalf("decode %s: %v", rec.Body.String(), err)
	}
}

func metaFindAPIResource(list []metav1.APIResource, name string) *metav1.APIResource {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

func TestDiscoveryAPIVersions(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	var v metav1.APIVersions
	metaDecode(t, metaGet(t, s, "/api", "application/json"), &v)
	if v.Kind != "APIVersions" || !slices.Equal(v.Versions, []string{"v1"}) {
		t.Errorf("got %+v", v)
	}
	if len(v.ServerAddressByClientCIDRs) != 1 || v.ServerAddressByClientCIDRs[0].ServerAddress != "10.0.0.5:6443" ||
		v.ServerAddressByClientCIDRs[0].ClientCIDR != "0.0.0.0/0" {
		t.Errorf("serverAddressByClientCIDRs = %+v", v.ServerAddressByClientCIDRs)
	}
}

func TestDiscoveryResourceLists(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	var core metav1.APIResourceList
	metaDecode(t, metaGet(t, s, "/api/v1", ""), &core)
	if core.Kind != "APIResourceList" || core.GroupVersion != "v1" {
		t.Errorf("core list header: %+v", core.TypeMeta)
	}
	pods := metaFindAPIResource(core.APIResources, "pods")
	if pods == nil || !pods.Namespaced || pods.Kind != "Pod" || pods.SingularName != "pod" ||
		!slices.Equal(pods.ShortNames, []string{"po"}) || !slices.Equal(pods.Categories, []string{"all"}) ||
		!slices.Equal([]string(pods.Verbs), []string(allVerbs)) || pods.StorageVersionHash == "" {
		t.Errorf("pods = %+v", pods)
	}
	tests := []struct {
		name, group, version, kind string
		verbs                      []string
	}{
		{"pods/status", "", "", "Pod", []string{"get", "patch", "update"}},
		{"pods/binding", "", "v1", "Binding", []string{"create"}},
		{"pods/eviction", "policy", "v1", "Eviction", []string{"create"}},
		{"pods/log", "", "v1", "Pod", []string{"get"}},
		{"namespaces/finalize", "", "v1", "Namespace", []string{"update"}},
	}
	for _, tt := range tests {
		r := metaFindAPIResource(core.APIResources, tt.name)
		if r == nil {
			t.Errorf("%s missing", tt.name)
			continue
		}
		if r.Group != tt.group || (tt.version != "" && r.Version != tt.version) || r.Kind != tt.kind ||
			!slices.Equal([]string(r.Verbs), tt.verbs) {
			t.Errorf("%s = %+v", tt.name, r)
		}
	}
	if ns := metaFindAPIResource(core.APIResources, "namespaces"); ns == nil || ns.Namespaced {
		t.Errorf("namespaces = %+v", ns)
	}

	var apps metav1.APIResourceList
	metaDecode(t, metaGet(t, s, "/apis/apps/v1", ""), &apps)
	scale := metaFindAPIResource(apps.APIResources, "deployments/scale")
	if apps.GroupVersion != "apps/v1" || scale == nil || scale.Group != "autoscaling" || scale.Kind != "Scale" {
		t.Errorf("apps/v1: %+v, scale %+v", apps.GroupVersion, scale)
	}
}

func TestDiscoveryGroups(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	var list metav1.APIGroupList
	metaDecode(t, metaGet(t, s, "/apis", "application/json"), &list)
	if list.Kind != "APIGroupList" || len(list.Groups) == 0 || list.Groups[0].Name != "apps" {
		t.Fatalf("groups = %+v", list)
	}
	for _, g := range list.Groups {
		if g.PreferredVersion.GroupVersion == "" || len(g.Versions) == 0 {
			t.Errorf("group %s without versions", g.Name)
		}
	}
	var g metav1.APIGroup
	metaDecode(t, metaGet(t, s, "/apis/batch", ""), &g)
	if g.Kind != "APIGroup" || g.Name != "batch" || g.PreferredVersion.GroupVersion != "batch/v1" {
		t.Errorf("batch = %+v", g)
	}
	for _, p := range []string{"/apis/nope", "/apis/nope/v1", "/apis/apps/v9", "/api/v2"} {
		rec := metaGet(t, s, p, "")
		var st metav1.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &st); rec.Code != http.StatusNotFound || err != nil || st.Kind != "Status" {
			t.Errorf("%s: code %d body %s", p, rec.Code, rec.Body.String())
		}
	}
}

func TestDiscoveryAggregated(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	for _, path := range []string{"/api", "/apis"} {
		rec := metaGet(t, s, path, discovery.AcceptV2NoPeer+","+discovery.AcceptV2+",application/json")
		if got := rec.Header().Get("Content-Type"); got != aggregatedMediaType {
			t.Fatalf("%s: Content-Type %q", path, got)
		}
		var list apidiscoveryv2.APIGroupDiscoveryList
		metaDecode(t, rec, &list)
		if list.Kind != "APIGroupDiscoveryList" || list.APIVersion != "apidiscovery.k8s.io/v2" || len(list.Items) == 0 {
			t.Fatalf("%s: %+v", path, list.TypeMeta)
		}
		if path == "/api" && (len(list.Items) != 1 || list.Items[0].Name != "" || list.Items[0].Versions[0].Version != "v1") {
			t.Errorf("/api items = %+v", list.Items)
		}
		if path == "/apis" && list.Items[0].Name != "apps" {
			t.Errorf("/apis first group = %q", list.Items[0].Name)
		}
	}
	// Plain JSON when aggregated discovery is not asked for.
	if got := metaGet(t, s, "/apis", "application/json").Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("plain /apis Content-Type %q", got)
	}
}

// TestDiscoveryClientGo runs client-go's discovery client (aggregated, as
// kubectl uses it) and its OpenAPI clients against the handler.
func TestDiscoveryClientGo(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	groups, resources, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) < 2 || groups[0].Name != "" {
		t.Errorf("groups: %d, first %q", len(groups), groups[0].Name)
	}
	found := map[string]bool{}
	for _, l := range resources {
		for _, r := range l.APIResources {
			found[l.GroupVersion+"/"+r.Name] = true
		}
	}
	for _, want := range []string{"v1/pods", "v1/pods/eviction", "apps/v1/deployments", "apps/v1/deployments/scale", "batch/v1/cronjobs"} {
		if !found[want] {
			t.Errorf("client-go discovery lacks %s", want)
		}
	}
	v, err := dc.ServerVersion()
	if err != nil || v.Major != "1" || v.Minor != "37" || v.GitVersion != "v1.37.1+orch" {
		t.Errorf("version = %+v, %v", v, err)
	}
	doc, err := dc.OpenAPISchema() // protobuf v2, as kubectl asks for it
	if err != nil || doc.Paths == nil || len(doc.Paths.Path) == 0 {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	gv, ok := paths["apis/apps/v1"]
	if !ok {
		t.Fatalf("v3 paths: %v", paths)
	}
	if b, err := gv.Schema("application/json"); err != nil || !json.Valid(b) {
		t.Errorf("apps/v1 schema: %v", err)
	}
}

func TestNonResourceMethodNotAllowed(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/version", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /version: %d", rec.Code)
	}
}
