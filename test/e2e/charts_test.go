//go:build charts

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// TestCharts installs real charts from $CHARTS (../shared/charts) with the
// real Helm CLI on a real node, their programs built from source into local
// images: `make charts`. Each chart is installed with --wait, checked to
// work, upgraded, rolled back and uninstalled.
func TestCharts(t *testing.T) {
	charts := os.Getenv("CHARTS")
	if charts == "" {
		t.Fatal("set CHARTS to the charts folder (make charts does: CHARTS=../shared/charts)")
	}
	requireHost(t)
	// The real metrics-server chart registers metrics.k8s.io: orch's own
	// metrics API steps aside (docs/metrics.md).
	e := startClusterAt(t, dummyAddress(t), "--disable", "metrics-server")
	cs := e.server.Clientset
	waitFor(t, 90*time.Second, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && nodeReady(n), err
	})
	h := &helm{t: t, bin: buildHelm(t), kubeconfig: e.server.Kubeconfig}
	h.onFail = func() { dumpPods(t, e) }
	t.Run("podinfo", func(t *testing.T) { chartPodinfo(t, e, h, filepath.Join(charts, "podinfo")) })
	t.Run("metrics-server", func(t *testing.T) { chartMetricsServer(t, e, h, filepath.Join(charts, "metrics-server")) })
	t.Run("traefik", func(t *testing.T) { chartTraefik(t, e, h, filepath.Join(charts, "traefik")) })
}

// chartTraefik: the traefik chart installs its CRDs, RBAC, IngressClass
// and LoadBalancer Service with --wait; an Ingress for a busybox web
// Service is routed through traefik; uninstall.
func chartTraefik(t *testing.T, e *agentEnv, h *helm, chart string) {
	root, _ := testutil.RepoRoot()
	dir := filepath.Join(root, "tools", "charts", "traefik")
	bin := buildStatic(t, dir, "github.com/traefik/traefik/v3/cmd/traefik", "GOSUMDB=off", "GOFLAGS=-mod=mod")
	err := testimages.WriteImage(filepath.Join(e.dataDir, "agent", "images", "traefik.tar"),
		[]testimages.File{{Name: "usr/local/bin/traefik", Mode: 0o755, Data: bin}},
		testimages.Config{Entrypoint: []string{"/usr/local/bin/traefik"}}, "docker.io/library/traefik:v3.7.10")
	if err != nil {
		t.Fatal(err)
	}
	cs := e.server.Clientset
	ctx := context.Background()
	h.run(t, "install", "traefik", chart, "-n", "traefik", "--create-namespace", "--wait", "--timeout", "5m", "--set", "image.pullPolicy=Never")
	crds, err := apiextClient(t, e).ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range crds.Items {
		if strings.HasSuffix(c.Name, ".traefik.io") || strings.HasSuffix(c.Name, ".traefik.containo.us") {
			n++
		}
	}
	if n == 0 {
		t.Fatal("the chart installed no traefik CRDs")
	}
	t.Logf("traefik CRDs installed: %d", n)
	web := bbContainer("httpd", "mkdir -p /www && echo routed-by-traefik > /www/index.html && exec httpd -f -p 80 -h /www")
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "tweb", Labels: map[string]string{"app": "tweb"}},
		Spec: corev1.PodSpec{NodeName: e.node, Containers: []corev1.Container{web}}})
	_, err = cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "tweb"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "tweb"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prefix := networkingv1.PathTypePrefix
	_, err = cs.NetworkingV1().Ingresses("default").Create(ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "tweb"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "web.test", IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "tweb",
					Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services("traefik").Get(ctx, "traefik", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client := bbContainer("client", "for i in $(seq 30); do timeout 5 wget -qO- --header 'Host: web.test' http://"+svc.Spec.ClusterIP+":80/ && exit 0; sleep 2; done; exit 1")
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "traefik-client"}, Spec: corev1.PodSpec{NodeName: e.node,
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{client}}})
	var p *corev1.Pod
	waitFor(t, 90*time.Second, "the client to finish", func() (bool, error) {
		var err error
		p, err = cs.CoreV1().Pods("default").Get(ctx, "traefik-client", metav1.GetOptions{})
		return err == nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed), nil
	})
	b, _ := os.ReadFile(filepath.Join(e.dataDir, "agent", "logs", "default_traefik-client_"+string(p.UID), "client", "0.log"))
	if p.Status.Phase != corev1.PodSucceeded || !strings.Contains(string(b), "routed-by-traefik") {
		t.Fatalf("the Ingress was not routed through traefik (%s):\n%s", p.Status.Phase, b)
	}
	h.run(t, "uninstall", "traefik", "-n", "traefik", "--wait", "--timeout", "5m")
}

func apiextClient(t *testing.T, e *agentEnv) apiextclient.Interface {
	c, err := apiextclient.NewForConfig(e.server.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chartMetricsServer: the real metrics-server, installed by its chart,
// scrapes the agent's /metrics/resource with its ServiceAccount token and
// serves metrics.k8s.io through APIService aggregation: `kubectl top`
// answers for the node and for metrics-server's own pod.
func chartMetricsServer(t *testing.T, e *agentEnv, h *helm, chart string) {
	root, _ := testutil.RepoRoot()
	bin := buildStatic(t, filepath.Join(root, "tools", "charts", "metrics-server"), "sigs.k8s.io/metrics-server/cmd/metrics-server")
	err := testimages.WriteImage(filepath.Join(e.dataDir, "agent", "images", "metrics-server.tar"),
		[]testimages.File{{Name: "metrics-server", Mode: 0o755, Data: bin}},
		testimages.Config{Entrypoint: []string{"/metrics-server"}, User: "65534"}, "registry.k8s.io/metrics-server/metrics-server:v0.8.0")
	if err != nil {
		t.Fatal(err)
	}
	h.run(t, "install", "metrics-server", chart, "-n", "kube-system", "--wait", "--timeout", "5m", "--set", "image.pullPolicy=Never")
	kubectl := testutil.Kubectl(t)
	top := func(args ...string) (string, error) {
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", e.server.Kubeconfig, "top"}, args...)...).CombinedOutput()
		return string(out), err
	}
	var out string
	waitFor(t, 180*time.Second, "kubectl top nodes", func() (bool, error) {
		var err error
		out, err = top("nodes")
		return err == nil && strings.Contains(out, e.node) && strings.Contains(out, "CPU(cores)"), nil
	})
	t.Logf("kubectl top nodes:\n%s", out)
	waitFor(t, 120*time.Second, "kubectl top pods", func() (bool, error) {
		var err error
		out, err = top("pods", "-n", "kube-system")
		return err == nil && strings.Contains(out, "metrics-server"), nil
	})
	t.Logf("kubectl top pods -n kube-system:\n%s", out)
	h.run(t, "uninstall", "metrics-server", "-n", "kube-system", "--wait", "--timeout", "5m")
}

// helm runs the Helm CLI against the test cluster.
type helm struct {
	t          *testing.T
	bin        string
	kubeconfig string
	onFail     func() // prints what helps to see why (pods, their logs)
}

func (h *helm) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(h.bin, append([]string{"--kubeconfig", h.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	t.Logf("helm %s\n%s", strings.Join(args, " "), out)
	if err != nil {
		if h.onFail != nil {
			h.onFail()
		}
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func buildHelm(t *testing.T) string {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", filepath.Join(root, "scripts", "build-helm.sh")).Output()
	if err != nil {
		t.Fatalf("building helm: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// podinfoImage writes ghcr.io/stefanprodan/podinfo:6.9.2 as upstream lays
// it out: /home/app/podinfo and ui/, /usr/local/bin/podcli, user 100.
func podinfoImage(t *testing.T, path string) {
	root, _ := testutil.RepoRoot()
	dir := filepath.Join(root, "tools", "charts", "podinfo")
	files := []testimages.File{
		{Name: "home/app/podinfo", Mode: 0o755, Data: buildStatic(t, dir, "github.com/stefanprodan/podinfo/cmd/podinfo")},
		{Name: "usr/local/bin/podcli", Mode: 0o755, Data: buildStatic(t, dir, "github.com/stefanprodan/podinfo/cmd/podcli")},
	}
	list := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/stefanprodan/podinfo")
	list.Dir = dir
	out, err := list.Output()
	if err != nil {
		t.Fatalf("podinfo module dir: %v", err)
	}
	ui := filepath.Join(strings.TrimSpace(string(out)), "ui")
	_ = filepath.WalkDir(ui, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(ui, p)
			files = append(files, testimages.File{Name: "home/app/ui/" + rel, Mode: 0o644, Data: b})
		}
		return nil
	})
	err = testimages.WriteImage(path, files, testimages.Config{Cmd: []string{"./podinfo"}, WorkingDir: "/home/app", User: "100"},
		"ghcr.io/stefanprodan/podinfo:6.9.2")
	if err != nil {
		t.Fatal(err)
	}
}

// chartPodinfo: install --wait, the Service answers, upgrade to two
// replicas, roll back to one, uninstall.
func chartPodinfo(t *testing.T, e *agentEnv, h *helm, chart string) {
	podinfoImage(t, filepath.Join(e.dataDir, "agent", "images", "podinfo.tar"))
	cs := e.server.Clientset
	h.run(t, "install", "podinfo", chart, "-n", "podinfo", "--create-namespace", "--wait", "--timeout", "5m",
		"--set", "image.pullPolicy=Never")
	svc, err := cs.CoreV1().Services("podinfo").Get(context.Background(), "podinfo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client := bbContainer("client", "for i in $(seq 20); do timeout 5 wget -qO- http://"+svc.Spec.ClusterIP+":9898/ && exit 0; sleep 2; done; exit 1")
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "podinfo-client"}, Spec: corev1.PodSpec{NodeName: e.node,
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{client}}})
	p := waitPod(t, cs, "podinfo-client", "Succeeded", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	b, _ := os.ReadFile(filepath.Join(e.dataDir, "agent", "logs", "default_podinfo-client_"+string(p.UID), "client", "0.log"))
	if p.Status.Phase != corev1.PodSucceeded || !strings.Contains(string(b), "greetings from podinfo") {
		t.Fatalf("podinfo did not answer through its Service (%s):\n%s", p.Status.Phase, b)
	}
	h.run(t, "upgrade", "podinfo", chart, "-n", "podinfo", "--wait", "--timeout", "5m", "--set", "image.pullPolicy=Never", "--set", "replicaCount=2")
	// helm's --wait accepts replicas - maxUnavailable ready pods (the chart
	// allows one unavailable); both come up soon after.
	waitFor(t, 60*time.Second, "two ready replicas after the upgrade", func() (bool, error) {
		d, err := cs.AppsV1().Deployments("podinfo").Get(context.Background(), "podinfo", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 2, nil
	})
	h.run(t, "rollback", "podinfo", "1", "-n", "podinfo", "--wait", "--timeout", "5m")
	waitFor(t, 60*time.Second, "one replica after the rollback", func() (bool, error) {
		d, err := cs.AppsV1().Deployments("podinfo").Get(context.Background(), "podinfo", metav1.GetOptions{})
		return err == nil && *d.Spec.Replicas == 1 && d.Status.Replicas == 1, nil
	})
	h.run(t, "uninstall", "podinfo", "-n", "podinfo", "--wait", "--timeout", "5m")
	if out := h.run(t, "list", "-A"); strings.Contains(out, "podinfo") {
		t.Fatalf("helm list after uninstall:\n%s", out)
	}
}

// dumpPods logs every pod's status and the tail of its containers' logs.
func dumpPods(t *testing.T, e *agentEnv) {
	pods, err := e.server.Clientset.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, p := range pods.Items {
		t.Logf("pod %s/%s: %s %+v", p.Namespace, p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		logs, _ := filepath.Glob(filepath.Join(e.dataDir, "agent", "logs", p.Namespace+"_"+p.Name+"_*", "*", "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("%s:\n%s", l, b)
		}
	}
	svcs, _ := e.server.Clientset.CoreV1().Services("").List(context.Background(), metav1.ListOptions{})
	for _, s := range svcs.Items {
		t.Logf("service %s/%s %s %v", s.Namespace, s.Name, s.Spec.Type, s.Status.LoadBalancer.Ingress)
	}
}
