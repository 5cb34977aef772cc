package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const drainManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: drain-web
spec:
  replicas: 2
  selector:
    matchLabels: {app: drain-web}
  template:
    metadata:
      labels: {app: drain-web}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: c
        image: busybox:1.36
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "sleep 3600"]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: drain-web
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: drain-web}
`

// TestDrain: kubectl cordon, drain and uncordon on the real node. With two
// replicas and a budget of minAvailable 1, drain evicts one pod, then the
// budget refuses the second (the replacement cannot land on the cordoned
// node) and drain times out with the API's message; uncordon lets the
// Deployment recover.
func TestDrain(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, false)
	k := newKubectl(t, e)
	k.must(drainManifest, "apply", "-f", "-")
	drainWaitReady(t, cs, 2)
	waitFor(t, 30*time.Second, "budget allows one disruption", func() (bool, error) {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(context.Background(), "drain-web", metav1.GetOptions{})
		return err == nil && pdb.Status.DisruptionsAllowed == 1, err
	})
	if out := k.must("", "cordon", e.node); !strings.Contains(out, "cordoned") {
		t.Fatalf("kubectl cordon: %s", out)
	}
	out, err := k.run("", "drain", e.node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=20s")
	if err == nil || !strings.Contains(out, "Cannot evict pod as it would violate the pod's disruption budget") {
		t.Fatalf("kubectl drain should be stopped by the budget (err %v):\n%s", err, out)
	}
	n, _ := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
	if !n.Spec.Unschedulable {
		t.Fatal("node not cordoned")
	}
	if out := k.must("", "uncordon", e.node); !strings.Contains(out, "uncordoned") {
		t.Fatalf("kubectl uncordon: %s", out)
	}
	drainWaitReady(t, cs, 2)
	k.must("", "delete", "deployment/drain-web", "pdb/drain-web")
}

func drainWaitReady(t *testing.T, cs kubernetes.Interface, want int) {
	t.Helper()
	waitFor(t, 90*time.Second, "drain-web pods ready", func() (bool, error) {
		pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=drain-web"})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(p) {
				ready++
			}
		}
		return ready == want, nil
	})
}
