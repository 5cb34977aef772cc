package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitNodeReady waits (up to 90s) until e's node is Ready, no longer
// carries the not-ready/unreachable taints the node lifecycle controller
// gave it while it registered (the scheduler skips tainted nodes) and,
// with podCIDR, has been given its pod CIDR.
func waitNodeReady(t *testing.T, e *agentEnv, podCIDR bool) {
	t.Helper()
	cs := e.server.Clientset
	waitFor(t, 90*time.Second, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && (!podCIDR || n.Spec.PodCIDR != "") && nodeReady(n) && !notReadyTainted(n), err
	})
}

func notReadyTainted(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return true
		}
	}
	return false
}
