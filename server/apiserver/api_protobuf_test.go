package apiserver

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// contentTypes records the Content-Type of every response.
type contentTypes struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string]string // "METHOD path?query" -> Content-Type
}

func (c *contentTypes) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil {
		c.mu.Lock()
		c.seen[r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery] = resp.Header.Get("Content-Type")
		c.mu.Unlock()
	}
	return resp, err
}

func (c *contentTypes) of(prefix string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, v := range c.seen {
		if strings.HasPrefix(k, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// protobufConfig is a loopback client config that prefers protobuf.
func protobufConfig(rt http.RoundTripper) *rest.Config {
	return &rest.Config{Host: "http://orch-loopback", Transport: rt,
		ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf,
			AcceptContentTypes: runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON}}
}

// TestClientGoProtobuf runs a client-go clientset that prefers protobuf (as
// kube-controller-manager's do): reads, writes and watches are protobuf,
// errors still decode, and JSON-only representations keep working.
func TestClientGoProtobuf(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	rt := &contentTypes{next: e.s.LoopbackTransport(), seen: map[string]string{}}
	cs, err := kubernetes.NewForConfig(protobufConfig(rt))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("default")
	w, err := cms.Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "1"}},
		Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.ResourceVersion == "" || len(cm.ManagedFields) != 1 {
		t.Fatalf("created: %+v", cm.ObjectMeta)
	}
	cm.Data["k"] = "v2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantEvent(ctx, t, w, watch.Added, "v")
	wantEvent(ctx, t, w, watch.Modified, "v2")
	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v2" || got.Labels["x"] != "1" {
		t.Fatalf("get: %v %+v", err, got)
	}
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "x=1"})
	if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
		t.Fatalf("list: %v %+v", err, list)
	}
	if _, err := cms.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v, want NotFound", err)
	}
	for _, prefix := range []string{"GET /api/v1/namespaces/default/configmaps/a", "GET /api/v1/namespaces/default/configmaps?labelSelector",
		"POST /api/v1/namespaces/default/configmaps", "PUT /api/v1/namespaces/default/configmaps/a"} {
		if ct := rt.of(prefix); len(ct) != 1 || ct[0] != runtime.ContentTypeProtobuf {
			t.Errorf("%s: Content-Type %v, want protobuf", prefix, ct)
		}
	}
	if ct := rt.of("GET /api/v1/namespaces/default/configmaps?allowWatchBookmarks"); len(ct) != 1 || ct[0] != runtime.ContentTypeProtobuf+";stream=watch" {
		t.Errorf("watch: Content-Type %v", ct)
	}
	// Tables are JSON only: a client asking for protobuf first gets JSON.
	resp := e.do("GET", "/api/v1/namespaces/default/configmaps", "",
		"Accept: application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io")
	if resp.code != 200 || !strings.Contains(string(resp.body), `"kind":"Table"`) {
		t.Fatalf("table: %d %s", resp.code, resp.body)
	}
	// Protobuf alone for something without a protobuf form is a 406.
	if resp := e.do("GET", "/api/v1/namespaces/default/configmaps", "", "Accept: application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"); resp.code != http.StatusNotAcceptable {
		t.Fatalf("protobuf table only: %d %s", resp.code, resp.body)
	}
}

func wantEvent(ctx context.Context, t *testing.T, w watch.Interface, typ watch.EventType, value string) {
	t.Helper()
	select {
	case ev := <-w.ResultChan():
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != typ || !ok || cm.Data["k"] != value || cm.ResourceVersion == "" {
			t.Fatalf("event %s %#v, want %s with k=%s", ev.Type, ev.Object, typ, value)
		}
	case <-ctx.Done():
		t.Fatalf("no %s event", typ)
	}
}
