package agent

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// TestServiceInformersOutliveAPart: the parts share one Services
// informer; a part that stops takes its handler with it, the others keep
// theirs until the agent stops the informers.
func TestServiceInformersOutliveAPart(t *testing.T) {
	client := fake.NewClientset()
	s := newServiceInformers(context.Background(), client)
	defer s.stop()
	a, b := s.view(), s.view()
	var seenA, seenB atomic.Int32
	infA, infB := a.Core().V1().Services().Informer(), b.Core().V1().Services().Informer()
	if infA.GetIndexer() != infB.GetIndexer() {
		t.Fatal("two parts have two Services informers")
	}
	if _, err := infA.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { seenA.Add(1) }}); err != nil {
		t.Fatal(err)
	}
	if _, err := infB.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { seenB.Add(1) }}); err != nil {
		t.Fatal(err)
	}
	a.StartWithContext(context.Background())
	b.StartWithContext(context.Background())
	create := func(name string) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if _, err := client.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(what string, n *atomic.Int32, want int32) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for n.Load() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s saw %d Services, want %d", what, n.Load(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	create("one")
	wait("part a", &seenA, 1)
	wait("part b", &seenB, 1)
	a.Shutdown()
	create("two")
	wait("part b after a stopped", &seenB, 2)
	time.Sleep(50 * time.Millisecond)
	if seenA.Load() != 1 {
		t.Fatalf("a stopped part saw %d Services", seenA.Load())
	}
}
