package nodeipam

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/apiserver/apiservertest"
)

// TestWithRealAPIServer runs the controller against the real API server
// (memory datastore, all registry resources) through its loopback transport.
func TestWithRealAPIServer(t *testing.T) {
	_, rc := apiservertest.Start(t)
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewForConfig(rc, Config{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	for _, name := range []string{"n1", "n2", "n3"} {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(name, ""), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	got := waitAssigned(t, client, 3) // fails on duplicates
	freed := got["n2"]
	if err := client.CoreV1().Nodes().Delete(ctx, "n2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node("n4", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = waitAssigned(t, client, 3)
	if got["n4"] != freed {
		t.Fatalf("n4 got %q, want the released %s (all: %v)", got["n4"], freed, got)
	}
	// The API server refuses to change an assigned pod CIDR: the controller
	// can never overwrite one.
	_, err = client.CoreV1().Nodes().Patch(ctx, "n1", "application/merge-patch+json",
		[]byte(`{"spec":{"podCIDR":"10.42.200.0/24","podCIDRs":["10.42.200.0/24"]}}`), metav1.PatchOptions{})
	if err == nil {
		t.Fatal("changing an assigned pod CIDR was accepted")
	}
}
