package metricsapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth"
)

// memObjects is an in-memory Objects.
type memObjects map[schema.GroupVersionResource][]metav1.PartialObjectMetadata

func (m memObjects) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (*metav1.PartialObjectMetadata, error) {
	for _, o := range m[gvr] {
		if o.Namespace == ns && o.Name == name {
			return &o, nil
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (m memObjects) List(_ context.Context, gvr schema.GroupVersionResource, ns string, sel labels.Selector) ([]metav1.PartialObjectMetadata, error) {
	var out []metav1.PartialObjectMetadata
	for _, o := range m[gvr] {
		if (ns == "" || o.Namespace == ns) && sel.Matches(labels.Set(o.Labels)) {
			out = append(out, o)
		}
	}
	return out, nil
}

func meta(ns, name string, lbl map[string]string) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbl}}
}

type allowAll struct{}

func (allowAll) AuthenticateRequest(*http.Request) (*auth.User, bool, error) {
	return &auth.User{Name: "admin", Groups: []string{"system:masters"}}, true, nil
}
func (allowAll) Authorize(context.Context, auth.Attributes) (bool, string, error) {
	return true, "", nil
}

// newTestAPI serves the metrics resources over a store with two readings
// of node n1 (pods default/a, default/b, kube-system/c) and n2 (one reading).
func newTestAPI(t *testing.T) http.Handler {
	t.Helper()
	store := NewStore(DefaultResolution)
	start := t0.Add(-time.Hour)
	pods := func(at time.Duration, cpu uint64) map[PodRef]map[string]Point {
		p := Point{Start: start, Time: t0.Add(at), CPU: cpu, Memory: 64 << 20}
		return map[PodRef]map[string]Point{{"default", "a"}: {"x": p, "y": p}, {"default", "b"}: {"x": p}, {"kube-system", "c"}: {"x": p}}
	}
	store.Put("n1", Batch{Node: &Point{Time: t0, CPU: 1e9, Memory: 1 << 30}, Pods: pods(0, 1e9)})
	store.Put("n1", Batch{Node: &Point{Time: t0.Add(10 * time.Second), CPU: 6e9, Memory: 1 << 30}, Pods: pods(10*time.Second, 2e9)})
	store.Put("n2", Batch{Node: &Point{Time: t0, CPU: 1e9, Memory: 1 << 30}})
	objs := memObjects{
		nodesGVR: {meta("", "n1", map[string]string{"role": "a"}), meta("", "n2", map[string]string{"role": "b"})},
		podsGVR: {meta("default", "a", map[string]string{"app": "a"}), meta("default", "b", map[string]string{"app": "b"}),
			meta("kube-system", "c", nil), meta("default", "nometrics", map[string]string{"app": "a"})},
	}
	mem := datastore.NewMemStore(0)
	t.Cleanup(func() { _ = mem.Close() })
	api, err := apiserver.New(apiserver.Config{Store: mem, Authenticator: allowAll{}, Authorizer: allowAll{},
		Logger: zaptest.NewLogger(t), Virtual: Resources(store, objs)})
	if err != nil {
		t.Fatal(err)
	}
	return api.Handler()
}

func get(t *testing.T, h http.Handler, path, accept string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func TestNodeMetricsREST(t *testing.T) {
	h := newTestAPI(t)
	code, body := get(t, h, "/apis/metrics.k8s.io/v1beta1/nodes", "")
	var list metricsv1beta1.NodeMetricsList
	if code != 200 || json.Unmarshal(body, &list) != nil || len(list.Items) != 1 || list.Kind != "NodeMetricsList" {
		t.Fatalf("list = %d %s", code, body)
	}
	n := list.Items[0]
	if n.Name != "n1" || n.Labels["role"] != "a" || n.Usage.Cpu().String() != "500m" || n.Usage.Memory().String() != "1Gi" ||
		n.Window.Duration != 10*time.Second || !n.Timestamp.Time.Equal(t0.Add(10*time.Second)) {
		t.Errorf("n1 = %+v", n)
	}
	code, body = get(t, h, "/apis/metrics.k8s.io/v1beta1/nodes/n1", "")
	var one metricsv1beta1.NodeMetrics
	if code != 200 || json.Unmarshal(body, &one) != nil || one.Kind != "NodeMetrics" || one.APIVersion != "metrics.k8s.io/v1beta1" {
		t.Errorf("get n1 = %d %s", code, body)
	}
	for path, want := range map[string]int{
		"/apis/metrics.k8s.io/v1beta1/nodes/n2":                   404, // one reading only
		"/apis/metrics.k8s.io/v1beta1/nodes/nope":                 404,
		"/apis/metrics.k8s.io/v1beta1/nodes?watch=true":           405,
		"/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=spec.x": 400,
	} {
		if code, body := get(t, h, path, ""); code != want {
			t.Errorf("GET %s = %d %s, want %d", path, code, body, want)
		}
	}
	if _, body := get(t, h, "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=role%3Db", ""); strings.Contains(string(body), `"n1"`) {
		t.Errorf("label selector role=b listed n1: %s", body)
	}
	if _, body := get(t, h, "/apis/metrics.k8s.io/v1beta1/nodes/n2", ""); !strings.Contains(string(body), `nodes.metrics.k8s.io \"n2\" not found`) {
		t.Errorf("404 body = %s", body)
	}
}

func TestPodMetricsREST(t *testing.T) {
	h := newTestAPI(t)
	names := func(path string) []string {
		t.Helper()
		code, body := get(t, h, path, "")
		var list metricsv1beta1.PodMetricsList
		if code != 200 || json.Unmarshal(body, &list) != nil {
			t.Fatalf("GET %s = %d %s", path, code, body)
		}
		var out []string
		for _, p := range list.Items {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		return out
	}
	for path, want := range map[string]string{
		"/apis/metrics.k8s.io/v1beta1/pods":                                                       "default/a default/b kube-system/c",
		"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods":                                    "default/a default/b",
		"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Da":              "default/a",
		"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?fieldSelector=metadata.name%3Dnope": "",
		"/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.namespace%3Dkube-system":        "kube-system/c",
		"/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.name%21%3Da":                    "default/b kube-system/c",
	} {
		if got := strings.Join(names(path), " "); got != want {
			t.Errorf("GET %s = %q, want %q", path, got, want)
		}
	}
	code, body := get(t, h, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a", "")
	var pm metricsv1beta1.PodMetrics
	if code != 200 || json.Unmarshal(body, &pm) != nil || len(pm.Containers) != 2 || pm.Containers[0].Name != "x" ||
		pm.Containers[0].Usage.Cpu().String() != "100m" || pm.Containers[1].Usage.Memory().String() != "64Mi" || pm.Labels["app"] != "a" {
		t.Fatalf("get a = %d %s", code, body)
	}
	for path, want := range map[string]string{
		"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nometrics": `pods.metrics.k8s.io \"default/nometrics\" not found`,
		"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/gone":      `pods \"gone\" not found`,
	} {
		if code, body := get(t, h, path, ""); code != 404 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d %s, want 404 with %q", path, code, body, want)
		}
	}
}

func TestMetricsTableAndDiscovery(t *testing.T) {
	h := newTestAPI(t)
	code, body := get(t, h, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var tbl metav1.Table
	if code != 200 || json.Unmarshal(body, &tbl) != nil || len(tbl.Rows) != 2 || len(tbl.ColumnDefinitions) != 4 {
		t.Fatalf("table = %d %s", code, body)
	}
	if cells := tbl.Rows[0].Cells; cells[0] != "a" || cells[1] != "200m" || cells[2] != "128Mi" || cells[3] != "10s" {
		t.Errorf("row a = %v", cells)
	}
	code, body = get(t, h, "/apis/metrics.k8s.io/v1beta1", "")
	var rl metav1.APIResourceList
	if code != 200 || json.Unmarshal(body, &rl) != nil || len(rl.APIResources) != 2 {
		t.Fatalf("discovery = %d %s", code, body)
	}
	for _, r := range rl.APIResources {
		if strings.Join(r.Verbs, ",") != "get,list" || (r.Name == "pods") != r.Namespaced {
			t.Errorf("discovery of %s = %+v", r.Name, r)
		}
	}
	if code, body := get(t, h, "/apis", ""); code != 200 || !strings.Contains(string(body), `"metrics.k8s.io/v1beta1"`) {
		t.Errorf("/apis = %d %s", code, body)
	}
}
