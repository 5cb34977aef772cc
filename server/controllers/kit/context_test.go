package kit

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/internal/handlermux"
)

// names records the pod names a handler was told about.
type names struct {
	mu  sync.Mutex
	got []string
}

func (n *names) add(obj any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, obj.(*corev1.Pod).Name)
}

func (n *names) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.got)
}

func waitCount(t *testing.T, what string, f func() int, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, want %d", what, f(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
}

// TestTermsOnASharedCache: a term's informers are the shared cache's and
// outlive the term; the term's handlers do not, and the next term sees
// everything cached meanwhile.
func TestTermsOnASharedCache(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	client := fake.NewClientset(pod("a"))
	base := handlermux.Wrap(informers.NewSharedInformerFactory(client, 0), "", nil)
	defer func() { cancel(); base.Shutdown() }()
	shared := &SharedCache{Factory: base, Start: func() { base.StartWithContext(ctx) }}
	base.Core().V1().Namespaces().Informer() // the server's own informers
	shared.Start()
	if !(&Context{mux: handlermux.Wrap(base, "", nil)}).Caches(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, reflect.TypeOf(&corev1.Namespace{})) {
		t.Fatal("a term does not see the cache's informers")
	}
	for term := 1; term <= 2; term++ {
		termCtx, endTerm := context.WithCancel(ctx)
		kc := New(client, nil, Options{Cache: shared})
		seen := &names{}
		inf := kc.Informers.Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen.add}); err != nil {
			t.Fatal(err)
		}
		if err := kc.Start(termCtx); err != nil {
			t.Fatal(err)
		}
		waitCount(t, "pods seen", seen.count, term) // "a", and "b1" of term 1
		endTerm()
		kc.Shutdown()
		name := "b" + string(rune('0'+term))
		if _, err := client.CoreV1().Pods("ns").Create(ctx, pod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		lister := base.Core().V1().Pods().Lister()
		waitCount(t, "pods cached after the term", func() int { l, _ := lister.List(labels.Everything()); return len(l) }, term+1)
		time.Sleep(50 * time.Millisecond)
		if seen.count() != term {
			t.Fatalf("term %d: a handler of an ended term was told of %v", term, seen.got)
		}
	}
}
