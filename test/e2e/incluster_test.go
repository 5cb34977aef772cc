package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// TestInClusterClient: a pod whose program uses rest.InClusterConfig() and
// nothing else reaches the API through the kubernetes Service with its
// ServiceAccount token, lists the pods its Role allows and is denied in
// kube-system. The server serves on an address the test adds to the
// loopback device (pods cannot reach 127.0.0.1) and removes again.
func TestInClusterClient(t *testing.T) {
	requireHost(t)
	addr := dummyAddress(t)
	e := startClusterAt(t, addr)
	cs := e.server.Clientset
	waitFor(t, 90*time.Second, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && nodeReady(n), err
	})
	writeInClusterImage(t, filepath.Join(e.dataDir, "agent", "images", "incluster.tar"))
	ctx := context.Background()
	ns := "incluster"
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "default-reads-pods"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: ns}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the default ServiceAccount", func() (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	p, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "client"}, Spec: corev1.PodSpec{
		NodeName: e.node, Containers: []corev1.Container{{Name: "c", Image: "orch.test/incluster:1", ImagePullPolicy: corev1.PullNever}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(e.dataDir, "agent", "logs", ns+"_client_"+string(p.UID), "c", "0.log")
	waitFor(t, 120*time.Second, "the in-cluster client to list its pods and be denied in kube-system", func() (bool, error) {
		b, _ := os.ReadFile(logPath)
		s := string(b)
		if strings.Contains(s, "CONFIG ERR") {
			return false, fmt.Errorf("the client found no in-cluster config: %s", s)
		}
		return strings.Contains(s, "LIST "+ns+" OK 1") && strings.Contains(s, "LIST kube-system FORBIDDEN"), nil
	})
	t.Run("resource metrics of the pod", func(t *testing.T) { kubeletResourceMetrics(t, e, ns) })
}

// kubeletResourceMetrics: the agent's /metrics/resource reports the
// running pod's container from its real cgroup (as metrics-server reads it).
func kubeletResourceMetrics(t *testing.T, e *agentEnv, ns string) {
	cfg := rest.CopyConfig(e.server.Config)
	cfg.Host = fmt.Sprintf("https://%s:%d", e.apiAddr, e.kubeletPort)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`container_memory_working_set_bytes{container="c",namespace=%q,pod="client"} `, ns)
	waitFor(t, 30*time.Second, "the pod in /metrics/resource", func() (bool, error) {
		resp, err := client.Get(cfg.Host + "/metrics/resource")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && strings.Contains(string(b), want) && strings.Contains(string(b), "node_cpu_usage_seconds_total"), nil
	})
}

// dummyAddress puts 10.254.<n>.1/32 on the loopback device and returns
// it: an address of this host only that pods can reach (127.0.0.0/8 they
// cannot). The address goes when the test ends.
func dummyAddress(t *testing.T) string {
	b := make([]byte, 1)
	_, _ = rand.Read(b)
	ip := net.IPv4(10, 254, b[0], 1)
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(32, 32)}}
	if err := netlink.AddrAdd(lo, addr); err != nil {
		t.Fatalf("adding %s to lo: %v", ip, err)
	}
	t.Cleanup(func() { _ = netlink.AddrDel(lo, addr) })
	return ip.String()
}

// writeInClusterImage builds test/images/incluster statically and writes
// it as the image orch.test/incluster:1 into the agent's air-gap dir.
func writeInClusterImage(t *testing.T, path string) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data := buildStatic(t, root, "./test/images/incluster")
	err = testimages.WriteImage(path, []testimages.File{{Name: "incluster", Mode: 0o755, Data: data}},
		testimages.Config{Entrypoint: []string{"/incluster"}}, "orch.test/incluster:1")
	if err != nil {
		t.Fatal(err)
	}
}

// buildStatic builds pkg statically in the module at dir (orch's own, or a
// test program's or chart program's separate module) and returns the binary.
func buildStatic(t *testing.T, dir, pkg string, env ...string) []byte {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "prog")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Dir, cmd.Env = dir, append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
