package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// TestKubectlTop: with one server and one agent running a pod that burns
// CPU (limited to 300m, to spare the host) and an idle one, a real
// `kubectl top nodes` and `kubectl top pods --containers` show values from
// orch's own metrics.k8s.io; the burner's CPU rises above 100m within a
// couple of minutes while the idle pod stays low; label selection and -A
// work, and the raw API answers.
func TestKubectlTop(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	ctx := context.Background()
	waitFor(t, 90*time.Second, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, e.node, metav1.GetOptions{})
		return err == nil && nodeReady(n), err
	})
	ns := "top-" + e.id
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	burn := bbContainer("burn", "while :; do :; done")
	cpu := resource.MustParse("300m")
	burn.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: cpu}}
	for name, c := range map[string]corev1.Container{"burner": burn, "idler": bbContainer("idle", "sleep 3600")} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{NodeName: e.node, Containers: []corev1.Container{c}, TerminationGracePeriodSeconds: new(int64)}}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	k := newKubectl(t, e)
	var usage map[string]int64
	waitFor(t, 150*time.Second, "kubectl top pods: burner above 100m", func() (bool, error) {
		out, err := k.run("", "top", "pods", "--containers", "-n", ns, "--no-headers")
		if err != nil {
			return false, nil // "metrics not available yet" until two scrapes
		}
		usage = containerCPU(t, out)
		return usage["burner/burn"] > 100, nil
	})
	if usage["idler/idle"] > 50 {
		t.Errorf("idle pod uses %dm CPU", usage["idler/idle"])
	}
	t.Logf("container CPU (millicores): %v", usage)
	checkTopNodes(t, k, e.node)
	if out := k.must("", "top", "pods", "-n", ns, "-l", "app=idler", "--no-headers"); !strings.HasPrefix(out, "idler ") || strings.Contains(out, "burner") {
		t.Errorf("top pods -l app=idler:\n%s", out)
	}
	if out := k.must("", "top", "pods", "-A", "--no-headers"); !strings.Contains(out, ns+" ") || !strings.Contains(out, "burner") {
		t.Errorf("top pods -A:\n%s", out)
	}
	var nodes metricsv1beta1.NodeMetricsList
	raw := k.must("", "get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes")
	if err := json.Unmarshal([]byte(raw), &nodes); err != nil || len(nodes.Items) != 1 || nodes.Items[0].Name != e.node ||
		nodes.Items[0].Usage.Memory().IsZero() || nodes.Items[0].Window.Duration <= 0 {
		t.Errorf("get --raw nodes: %v\n%s", err, raw)
	}
	if out := k.must("", "get", "apiservices", "v1beta1.metrics.k8s.io", "--no-headers"); !strings.Contains(out, "Local") || !strings.Contains(out, "True") {
		t.Errorf("APIService:\n%s", out)
	}
	if out, err := k.run("", "top", "pods", "-n", ns, "--as", "top-nobody"); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("top pods without RBAC rights: %v\n%s", err, out)
	}
	t.Logf("orch server RSS with the metrics API, one node and two pods: %s", serverRSS(e.server.DataDir))
}

// containerCPU reads `kubectl top pods --containers --no-headers` (POD
// NAME CPU MEMORY) into pod/container → millicores.
func containerCPU(t *testing.T, out string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || !strings.HasSuffix(f[3], "Mi") {
			t.Fatalf("unexpected kubectl top line %q in\n%s", line, out)
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(f[2], "m"), 10, 64)
		if err != nil {
			t.Fatalf("CPU of %q: %v", line, err)
		}
		m[f[0]+"/"+f[1]] = v
	}
	return m
}

// checkTopNodes: `kubectl top nodes` shows the node with CPU and memory
// (once it has two readings: up to two scrapes, 30 s).
func checkTopNodes(t *testing.T, k *kubectlRunner, node string) {
	t.Helper()
	var out string
	waitFor(t, 60*time.Second, "kubectl top nodes with values for "+node, func() (bool, error) {
		var err error
		if out, err = k.run("", "top", "nodes", "--no-headers"); err != nil {
			return false, nil
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 5 && f[0] == node && strings.HasSuffix(f[1], "m") && strings.HasSuffix(f[3], "Mi") && f[3] != "0Mi" {
				return true, nil
			}
		}
		return false, nil
	})
	t.Logf("kubectl top nodes:\n%s", out)
}

// serverRSS is VmRSS of the orch server using dataDir (for the log).
func serverRSS(dataDir string) string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), "server\x00") || !strings.Contains(string(b), dataDir+"\x00") {
			continue
		}
		st, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "status"))
		for _, l := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(l, "VmRSS:") {
				return strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:"))
			}
		}
	}
	return fmt.Sprintf("unknown (no process for %s)", dataDir)
}
