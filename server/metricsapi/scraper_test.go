package metricsapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

type nodeList []corev1.Node

func (l nodeList) List(context.Context) ([]corev1.Node, error) { return l, nil }

// fakeFetch serves a node reading whose CPU grows by 1 s per call.
type fakeFetch struct {
	mu    sync.Mutex
	calls map[string]int
	fail  map[string]bool
}

func (f *fakeFetch) Fetch(_ context.Context, n *corev1.Node) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[n.Name]++
	if f.fail[n.Name] {
		return nil, errors.New("unreachable")
	}
	c := f.calls[n.Name]
	return []byte(fmt.Sprintf("node_cpu_usage_seconds_total %d %d\nnode_memory_working_set_bytes 100 %d\n", c, c*15000, c*15000)), nil
}

func node(name string, ready corev1.ConditionStatus) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
}

func TestScrapeOnce(t *testing.T) {
	store := NewStore(DefaultResolution)
	f := &fakeFetch{calls: map[string]int{}, fail: map[string]bool{"broken": true}}
	s := &Scraper{Nodes: nodeList{node("ok", "True"), node("broken", "True"), node("down", "Unknown")}, Fetch: f, Store: store,
		Log: zaptest.NewLogger(t)}
	store.Put("broken", Batch{Node: &Point{Time: t0, CPU: 1, Memory: 1}})
	store.Put("deleted", Batch{Node: &Point{Time: t0, CPU: 1, Memory: 1}})
	s.ScrapeOnce(context.Background())
	s.ScrapeOnce(context.Background())
	if f.calls["down"] != 0 {
		t.Error("a node that is not Ready was scraped")
	}
	u, ok := store.Node("ok")
	if q := u.Resources["cpu"]; !ok || q.String() != "66666666n" {
		t.Errorf("ok usage = %+v %v", u, ok)
	}
	if nodes, _ := store.Size(); nodes != 1 {
		t.Errorf("store holds %d nodes, want only the scraped one", nodes)
	}
}

func TestScrapeNoNodes(t *testing.T) {
	f := &fakeFetch{calls: map[string]int{}}
	s := &Scraper{Nodes: nodeList{}, Fetch: f, Store: NewStore(DefaultResolution), Log: zaptest.NewLogger(t)}
	s.ScrapeOnce(context.Background())
	if len(f.calls) != 0 {
		t.Errorf("fetches without nodes: %v", f.calls)
	}
}

func TestKubeletFetcher(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics/resource" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("node_cpu_usage_seconds_total 1\n"))
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "nowhere.invalid"}, {Type: corev1.NodeInternalIP, Address: host}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(p)}}}}
	tc := &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	body, err := NewKubeletFetcher(tc).Fetch(context.Background(), &n)
	if err != nil || string(body) != "node_cpu_usage_seconds_total 1\n" {
		t.Fatalf("fetch = %q, %v", body, err)
	}
	if _, err := NewKubeletFetcher(tc).Fetch(context.Background(), &corev1.Node{}); err == nil {
		t.Error("fetch from a node without addresses succeeded")
	}
}

// ListerNodes reads the cache: nothing before it has synced, then every
// node in it.
func TestListerNodes(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, n := range []string{"a", "b"} {
		if err := idx.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	synced := false
	l := ListerNodes{Lister: corelisters.NewNodeLister(idx), Synced: func() bool { return synced }}
	if ns, err := l.List(context.Background()); err != nil || len(ns) != 0 {
		t.Fatalf("before sync: %v, %v; want none", ns, err)
	}
	synced = true
	ns, err := l.List(context.Background())
	if err != nil || len(ns) != 2 {
		t.Fatalf("after sync: %d nodes, %v; want 2", len(ns), err)
	}
}
