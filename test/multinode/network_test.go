package multinode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/test/cluster"
)

// TestMultinodeVXLAN: pods on three nodes reach each other by pod IP over
// the VXLAN overlay; a node that leaves takes its routes, neighbour and FDB
// entries with it on the other nodes.
func TestMultinodeVXLAN(t *testing.T) {
	c := cluster.Start(t, cluster.Options{Backend: "vxlan", Busybox: true})
	multinodeCrossNode(t, c)
	multinodeNodeLeaves(t, c, 3)
	multinodeDownLeavesNothing(t, c)
}

// TestMultinodeHostGW: the same over host-gw routes (the nodes share the
// test bridge's L2 segment).
func TestMultinodeHostGW(t *testing.T) {
	c := cluster.Start(t, cluster.Options{Backend: "host-gw", Busybox: true})
	if out, err := c.InNode(1, "ip", "-o", "link", "show", "orch.1"); err == nil {
		t.Errorf("host-gw node has a VXLAN device: %s", out)
	}
	multinodeCrossNode(t, c)
	multinodeNodeLeaves(t, c, 3)
	multinodeDownLeavesNothing(t, c)
}

// multinodeCrossNode runs busybox httpd on node 2 and, on nodes 1 and 3,
// clients that fetch its page by pod IP.
func multinodeCrossNode(t *testing.T, c *cluster.Cluster) {
	cs := c.Client
	web := multinodePod("web", c.Nodes[1].Name, corev1.RestartPolicyAlways,
		`mkdir -p /www && echo "hello from $(hostname)" > /www/index.html && dd if=/dev/zero of=/www/big bs=1024 count=512 &&
		exec httpd -f -v -p 80 -h /www`)
	webIP := multinodeWaitPod(t, cs, multinodeCreate(t, cs, web), "running with an IP", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != ""
	}).Status.PodIP
	// Then a 512 KiB page: full-size packets through the overlay's MTU.
	fetch := fmt.Sprintf(`for i in $(seq 60); do if timeout 3 wget -qO- http://%[1]s/index.html; then
		echo "big: $(timeout 10 wget -qO- http://%[1]s/big | wc -c)"; exit 0; fi; sleep 1; done; exit 1`, webIP)
	for _, n := range []int{0, 2} {
		name := fmt.Sprintf("client-%d", n+1)
		p := multinodeWaitPod(t, cs, multinodeCreate(t, cs, multinodePod(name, c.Nodes[n].Name, corev1.RestartPolicyNever, fetch)),
			"finished", func(p *corev1.Pod) bool {
				return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
			})
		logs, err := cs.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(context.Background())
		if p.Status.Phase != corev1.PodSucceeded || !strings.Contains(string(logs), "hello from web") || !strings.Contains(string(logs), "big: 524288") {
			t.Fatalf("pod %s on %s (IP %s) could not fetch http://%s/ on %s: phase %s, logs %q, %v",
				name, c.Nodes[n].Name, p.Status.PodIP, webIP, c.Nodes[1].Name, p.Status.Phase, logs, err)
		}
		t.Logf("%s (%s on %s) fetched %q from %s on %s", name, p.Status.PodIP, c.Nodes[n].Name, strings.TrimSpace(string(logs)), webIP, c.Nodes[1].Name)
		// httpd -v logs the client's address: the pod IP, not masqueraded.
		webLogs, _ := cs.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{}).DoRaw(context.Background())
		if !strings.Contains(string(webLogs), p.Status.PodIP) {
			t.Errorf("web's log does not show the client's pod IP %s (masqueraded?):\n%s", p.Status.PodIP, webLogs)
		}
	}
}

// multinodeNodeLeaves stops node i, deletes its Node and waits until the
// other nodes hold no route (nor FDB entry) towards it.
func multinodeNodeLeaves(t *testing.T, c *cluster.Cluster, i int) {
	ctx := context.Background()
	n, err := c.Client.CoreV1().Nodes().Get(ctx, c.Nodes[i-1].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cidr, ip := n.Spec.PodCIDR, c.Nodes[i-1].IP
	for other := 1; other <= len(c.Nodes); other++ {
		if other != i && !strings.Contains(multinodeNetState(c, other), cidr) {
			t.Fatalf("node %d has no route to %s before node %d leaves:\n%s", other, cidr, i, multinodeNetState(c, other))
		}
	}
	c.StopNode(i)
	if err := c.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for other := 1; other <= len(c.Nodes); other++ {
		if other == i {
			continue
		}
		multinodeWaitFor(t, 30*time.Second, fmt.Sprintf("node %d to drop its routes to %s", other, n.Name), func() bool {
			s := multinodeNetState(c, other)
			return !strings.Contains(s, cidr) && !strings.Contains(s, "dst "+ip+" ")
		})
	}
}

// multinodeNetState is a node's overlay routes, neighbours and FDB.
func multinodeNetState(c *cluster.Cluster, i int) string {
	routes, _ := c.InNode(i, "ip", "route", "show", "proto", "111")
	fdb, _ := c.InNode(i, "bridge", "fdb", "show", "dev", "orch.1")
	return routes + fdb
}

func multinodeDownLeavesNothing(t *testing.T, c *cluster.Cluster) {
	if err := c.Down(); err != nil {
		t.Fatal(err)
	}
	if left := c.Leftovers(); len(left) > 0 {
		t.Errorf("left on the host after down:\n%s", strings.Join(left, "\n"))
	}
	if err := c.Down(); err != nil { // idempotent
		t.Errorf("second down: %v", err)
	}
}

func multinodePod(name, node string, restart corev1.RestartPolicy, script string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: restart, Containers: []corev1.Container{{
			Name: name, Image: "docker.io/library/busybox:1.36", ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"sh", "-c", script}}}}}
}

func multinodeCreate(t *testing.T, cs kubernetes.Interface, p *corev1.Pod) string {
	t.Helper()
	if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", p.Name, err)
	}
	return p.Name
}

func multinodeWaitPod(t *testing.T, cs kubernetes.Interface, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	multinodeWaitFor(t, 90*time.Second, "pod "+name+" "+what, func() bool {
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			last = p
		}
		return err == nil && cond(p)
	})
	return last
}

func multinodeWaitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
