package integration

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

// TestNodePortAllocationUnderContention shrinks the NodePort range to 25
// ports and creates 25 NodePort services at once: every create must succeed
// (allocation conflicts are retried by the server, not returned) with a
// distinct port, and the 26th must fail because the range is full.
func TestNodePortAllocationUnderContention(t *testing.T) {
	t.Parallel()
	const first, size = 30100, 25
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{
		"--service-node-port-range", fmt.Sprintf("%d-%d", first, first+size-1),
	}})
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().Services(ns)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ports := map[int32]string{}
	ips := map[string]string{}
	for i := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc := webService(ns, fmt.Sprintf("np-%d", i))
			svc.Spec.Type = corev1.ServiceTypeNodePort
			out, err := c.Create(ctx, svc, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("create np-%d while the range has room: %v", i, err)
				return
			}
			np := out.Spec.Ports[0].NodePort
			if np < first || np >= first+size {
				t.Errorf("np-%d got nodePort %d outside %d-%d", i, np, first, first+size-1)
			}
			if other, dup := ports[np]; dup {
				t.Errorf("nodePort %d given to %s and %s", np, other, out.Name)
			}
			ports[np] = out.Name
			if other, dup := ips[out.Spec.ClusterIP]; dup {
				t.Errorf("clusterIP %s given to %s and %s", out.Spec.ClusterIP, other, out.Name)
			}
			ips[out.Spec.ClusterIP] = out.Name
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	svc := webService(ns, "one-too-many")
	svc.Spec.Type = corev1.ServiceTypeNodePort
	if _, err := c.Create(ctx, svc, metav1.CreateOptions{}); err == nil {
		t.Fatalf("NodePort service created with all %d ports taken", size)
	} else {
		t.Logf("full range: %v", err)
	}
	if _, err := c.Get(ctx, "one-too-many", metav1.GetOptions{}); err == nil {
		t.Fatalf("failed create stored the service")
	}
	// Deleting one frees its port for the next.
	must(t, c.Delete(ctx, "np-0", metav1.DeleteOptions{}), "delete np-0")
	_, err := c.Create(ctx, svc, metav1.CreateOptions{})
	must(t, err, "create after a port was freed")
}
