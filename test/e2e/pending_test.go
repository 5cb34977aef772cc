package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOversizedPodPending: on the real node (whose status lists its
// images, for ImageLocality), a pod asking for more cpu than any node has
// stays Pending with kube-scheduler's message, a FailedScheduling event,
// and `kubectl describe` shows both.
func TestOversizedPodPending(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, false)
	waitFor(t, 60*time.Second, "node status lists the imported images", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				if name == "docker.io/library/busybox:1.36" && img.SizeBytes > 0 {
					return true, nil
				}
			}
		}
		return false, nil
	})
	c := bbContainer("c", "sleep 3600")
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "huge"}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}})
	const want = "0/1 nodes are available: 1 Insufficient cpu."
	p := waitPod(t, cs, "huge", "Unschedulable", func(p *corev1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return strings.HasPrefix(c.Message, want)
			}
		}
		return false
	})
	if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
		t.Fatalf("oversized pod placed: node %q phase %s", p.Spec.NodeName, p.Status.Phase)
	}
	out := newKubectl(t, e).must("", "describe", "pod", "huge")
	for _, w := range []string{"FailedScheduling", want} {
		if !strings.Contains(out, w) {
			t.Errorf("kubectl describe pod huge lacks %q:\n%s", w, out)
		}
	}
	if !regexp.MustCompile(`(?m)^Status:\s+Pending$`).MatchString(out) {
		t.Errorf("kubectl describe pod huge lacks Status: Pending:\n%s", out)
	}
}
