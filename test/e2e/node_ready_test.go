package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitNodeReady waits (up to 90s) until e's node is Ready and, with
// podCIDR, has been given its pod CIDR.
func waitNodeReady(t *testing.T, e *agentEnv, podCIDR bool) {
	t.Helper()
	cs := e.server.Clientset
	waitFor(t, 90*time.Second, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && (!podCIDR || n.Spec.PodCIDR != "") && nodeReady(n), err
	})
}
