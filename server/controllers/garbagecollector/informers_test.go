package garbagecollector

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// TestStartedTypesSeesRunningTypedInformers: the collector shares the
// typed informers the controllers run (synced or not yet) and only those.
func TestStartedTypesSeesRunningTypedInformers(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	f.Core().V1().Pods().Informer()
	f.Core().V1().ConfigMaps().Informer() // registered, never started below
	started := startedTypes(f)
	if len(started) != 0 {
		t.Fatalf("before Start: %v", started)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.StartWithContext(ctx)
	started = startedTypes(f)
	pod := typeOf(schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	secret := typeOf(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	if pod == nil || !started[pod] {
		t.Errorf("pods (%v) not among the started types %v", pod, started)
	}
	if started[secret] {
		t.Errorf("secrets among the started types %v", started)
	}
	if typeOf(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}) != nil {
		t.Error("a custom kind has a typed Go type")
	}
}
