package kubeletapi

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/agent/runtime"
)

func TestPodLookupFromRuntime(t *testing.T) {
	f := runtime.NewFake()
	ctx := context.Background()
	for _, s := range []runtime.ContainerSpec{
		{ID: "a0", PodUID: "u1", Name: "app", RestartCount: 0},
		{ID: "a1", PodUID: "u1", Name: "app", RestartCount: 1},
		{ID: "s0", PodUID: "u1", Name: "side"},
		{ID: "x0", PodUID: "other", Name: "app"},
	} {
		if err := f.CreateContainer(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Status: corev1.PodStatus{PodIP: "10.42.0.5"}}
	lookup := PodLookupFromRuntime(f, func(ns, name string) (*corev1.Pod, bool) {
		return pod, ns == "default" && name == "web"
	})
	got, ok := lookup("default", "web")
	if !ok || got.UID != "u1" || got.IP != "10.42.0.5" || len(got.Containers) != 2 ||
		got.Containers["app"] != "a1" || got.Containers["side"] != "s0" {
		t.Fatalf("lookup: %+v %v", got, ok)
	}
	if _, ok := lookup("default", "nope"); ok {
		t.Fatal("unknown pod found")
	}
}
