package multinode

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/cluster"
)

// TestAgentFailover runs three servers (an HA control plane) with an agent
// on each node, every agent joined to node 1's server, and SIGKILLs that
// server: each agent must fail over to another server by itself — its
// node's Lease keeps being renewed — and a pod bound to node 1 afterwards
// must start. The time from the kill to each agent's first renewal is its
// failover time.
func TestAgentFailover(t *testing.T) {
	c := cluster.Start(t, cluster.Options{Nodes: 3, Servers: 3, Busybox: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs := c.ClientOf(2)
	waitKubernetesEndpoints(t, ctx, cs, 3)
	time.Sleep(3 * time.Second) // the agents' watches deliver the EndpointSlice
	killed := c.KillServer(1)
	for _, n := range c.Nodes {
		renewed := waitLeaseRenewed(t, ctx, cs, n.Name, killed)
		t.Logf("agent of %s renewed its lease %.1f s after node 1's server was killed", n.Name, renewed.Sub(killed).Seconds())
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "after-failover"}, Spec: corev1.PodSpec{
		NodeName: c.Nodes[0].Name, TerminationGracePeriodSeconds: ptr.To(int64(0)),
		Containers: []corev1.Container{{Name: "c", Image: "docker.io/library/busybox:1.36",
			ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "3600"}}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.CoreV1().Pods("default").Delete(context.Background(), pod.Name, metav1.DeleteOptions{}) }()
	var phase corev1.PodPhase
	for phase != corev1.PodRunning {
		p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil {
			phase = p.Status.Phase
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the pod on node 1 never ran after the failover (phase %q, last error %v)", phase, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// waitLeaseRenewed waits until node's Lease is renewed after since and
// returns the renewal time.
func waitLeaseRenewed(t *testing.T, ctx context.Context, cs kubernetes.Interface, node string, since time.Time) time.Time {
	t.Helper()
	var last error
	for {
		l, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, node, metav1.GetOptions{})
		if err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(since) {
			return l.Spec.RenewTime.Time
		}
		if err == nil {
			err = fmt.Errorf("last renewed %v", l.Spec.RenewTime)
		}
		last = err
		select {
		case <-ctx.Done():
			t.Fatalf("the agent of %s did not renew its lease after the server it joined was killed: %v", node, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitKubernetesEndpoints waits until the kubernetes EndpointSlice lists n
// servers: the agents learn the servers from it.
func waitKubernetesEndpoints(t *testing.T, ctx context.Context, cs kubernetes.Interface, n int) {
	t.Helper()
	for {
		s, err := cs.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err == nil && len(s.Endpoints) == n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the kubernetes EndpointSlice never listed %d servers (%v)", n, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
