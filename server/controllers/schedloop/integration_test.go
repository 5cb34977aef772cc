package schedloop

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/apiserver/apiservertest"
)

// TestWithRealAPIServer schedules through the real API server (memory
// datastore) and its binding and status subresources.
func TestWithRealAPIServer(t *testing.T) {
	api, rc := apiservertest.Start(t)
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := NewForConfig(rc, Config{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	create(t, client, node("n1", "2"), node("n2", "2"))
	create(t, client, pod("small", "500m"))
	waitFor(t, "small bound", func() bool { return get(t, client, "small").Spec.NodeName != "" })
	waitFor(t, "Scheduled event", func() bool {
		return eventFor(t, client, "small", EventScheduled, "Successfully assigned default/small to "+get(t, client, "small").Spec.NodeName)
	})

	const msg = "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
	create(t, client, pod("big", "4"))
	waitFor(t, "PodScheduled=False", func() bool {
		c := scheduledCondition(get(t, client, "big"))
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && c.Message == msg
	})
	waitFor(t, "FailedScheduling event", func() bool { return eventFor(t, client, "big", EventFailedScheduling, msg) })

	create(t, client, node("n3", "8"))
	waitFor(t, "big bound to n3", func() bool { return get(t, client, "big").Spec.NodeName == "n3" })
}

func create(t *testing.T, client kubernetes.Interface, objs ...any) {
	t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.Node:
			_, err = client.CoreV1().Nodes().Create(context.Background(), o, metav1.CreateOptions{})
		case *corev1.Pod:
			_, err = client.CoreV1().Pods(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func get(t *testing.T, client kubernetes.Interface, name string) *corev1.Pod {
	t.Helper()
	p, err := client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
