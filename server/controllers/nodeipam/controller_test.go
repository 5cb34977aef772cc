package nodeipam

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

func node(name, cidr string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if cidr != "" {
		n.Spec.PodCIDR, n.Spec.PodCIDRs = cidr, []string{cidr}
	}
	return n
}

// startController runs a controller until the test ends.
func startController(t *testing.T, client kubernetes.Interface, cluster string) {
	t.Helper()
	c, err := New(Config{Client: client, ClusterCIDR: cluster, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// waitFor polls cond until it holds (or fails the test after a generous timeout).
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error: %v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// podCIDRs returns node name → pod CIDR for nodes that have one, and
// fails on duplicates.
func podCIDRs(t *testing.T, client kubernetes.Interface) map[string]string {
	t.Helper()
	list, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, seen := map[string]string{}, map[string]string{}
	for _, n := range list.Items {
		if n.Spec.PodCIDR == "" {
			continue
		}
		if other, dup := seen[n.Spec.PodCIDR]; dup {
			t.Fatalf("nodes %s and %s share pod CIDR %s", other, n.Name, n.Spec.PodCIDR)
		}
		if len(n.Spec.PodCIDRs) != 1 || n.Spec.PodCIDRs[0] != n.Spec.PodCIDR {
			t.Fatalf("node %s: podCIDRs %v do not match podCIDR %s", n.Name, n.Spec.PodCIDRs, n.Spec.PodCIDR)
		}
		seen[n.Spec.PodCIDR], out[n.Name] = n.Name, n.Spec.PodCIDR
	}
	return out
}

func waitAssigned(t *testing.T, client kubernetes.Interface, n int) map[string]string {
	t.Helper()
	var got map[string]string
	waitFor(t, fmt.Sprintf("%d nodes with pod CIDRs", n), func() (bool, error) {
		got = podCIDRs(t, client)
		return len(got) == n, nil
	})
	return got
}

func TestRebuildsFromExistingNodes(t *testing.T) {
	client := fake.NewClientset(node("a", "10.42.0.0/24"), node("b", "10.42.2.0/24"), node("c", ""))
	startController(t, client, "")
	got := waitAssigned(t, client, 3)
	if got["c"] != "10.42.1.0/24" || got["a"] != "10.42.0.0/24" || got["b"] != "10.42.2.0/24" {
		t.Fatalf("got %v, want c to get the first free subnet 10.42.1.0/24", got)
	}
}

func TestConcurrentNodesGetDistinctCIDRs(t *testing.T) {
	client := fake.NewClientset()
	startController(t, client, "")
	for i := range 30 {
		go func() {
			_, _ = client.CoreV1().Nodes().Create(context.Background(), node(fmt.Sprintf("n%d", i), ""), metav1.CreateOptions{})
		}()
	}
	waitAssigned(t, client, 30) // podCIDRs fails on any duplicate
}

func TestExhaustionAndRelease(t *testing.T) {
	client := fake.NewClientset(node("a", ""), node("b", ""))
	startController(t, client, "10.42.0.0/23")
	waitAssigned(t, client, 2)
	ctx := context.Background()
	if _, err := client.CoreV1().Nodes().Create(ctx, node("c", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a CIDRNotAvailable event for c", func() (bool, error) {
		evs, err := client.CoreV1().Events("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == EventCIDRNotAvailable && e.InvolvedObject.Name == "c" && e.Type == corev1.EventTypeWarning {
				return true, nil
			}
		}
		return false, nil
	})
	freed := podCIDRs(t, client)["a"]
	if err := client.CoreV1().Nodes().Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := waitAssigned(t, client, 2)
	if got["c"] != freed {
		t.Fatalf("c got %q, want the released %s", got["c"], freed)
	}
}

func TestRestartKeepsAssignments(t *testing.T) {
	client := fake.NewClientset(node("a", ""), node("b", ""))
	c, err := New(Config{Client: client, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 { // the second Run is a restart / new leader
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = c.Run(ctx) }()
		name := fmt.Sprintf("new-%d", round)
		if _, err := client.CoreV1().Nodes().Create(ctx, node(name, ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAssigned(t, client, 3+round)
		cancel()
		<-done
	}
}
