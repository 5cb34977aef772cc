package cachetrim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestManagedFieldsDropsOnlyManagedFields(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, err := ManagedFields(p)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.ManagedFields != nil || got.Name != "p" || got.Labels["a"] != "b" {
		t.Fatalf("got %+v", got.ObjectMeta)
	}
	// Tombstones and other non-objects pass through unchanged.
	ts := cache.DeletedFinalStateUnknown{Key: "ns/p"}
	if out, err := ManagedFields(ts); err != nil || out != ts {
		t.Fatalf("tombstone: %v, %v", out, err)
	}
}
