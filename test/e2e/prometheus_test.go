package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/test/testutil"
)

// TestPrometheus: a real Prometheus (upstream's, scripts/build-prometheus.sh)
// with the usual Kubernetes scrape jobs — kubernetes_sd_configs over the
// API, a ServiceAccount token bound to a ClusterRole like Prometheus's,
// TLS checked against the cluster CA — scrapes the API server (role
// endpoints, default/kubernetes), the agent's /metrics and its cAdvisor
// endpoint (role node); all targets come up and a query returns a running
// pod's CPU time.
func TestPrometheus(t *testing.T) {
	e := startCluster(t)
	bin := prometheusBinary(t)
	cs := e.server.Clientset
	ctx := context.Background()
	waitFor(t, 90*time.Second, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, e.node, metav1.GetOptions{})
		return err == nil && nodeReady(n), err
	})
	ns := "prom-" + e.id
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	token := prometheusIdentity(t, cs, ns, "prometheus-"+e.id)
	burn := bbContainer("bb", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 3600")
	burn.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bb", Namespace: ns},
		Spec: corev1.PodSpec{NodeName: e.node, Containers: []corev1.Container{burn}, TerminationGracePeriodSeconds: new(int64)}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 90*time.Second, "pod bb running", func() (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "bb", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	api := fmt.Sprintf("https://127.0.0.1:%d", e.server.HTTPSPort)
	caFile := filepath.Join(e.server.DataDir, "server", "tls", "ca.crt")
	prom := startPrometheus(t, bin, dir, prometheusConfig(api, caFile, tokenFile))
	waitFor(t, 120*time.Second, "all Prometheus targets up", func() (bool, error) {
		return prom.targetsUp(map[string]int{"kubernetes-apiservers": 1, "kubernetes-nodes": 1, "kubernetes-cadvisor": 1})
	})
	var cpu float64
	q := fmt.Sprintf(`container_cpu_usage_seconds_total{job="kubernetes-cadvisor",namespace=%q,pod="bb",container="bb"}`, ns)
	waitFor(t, 60*time.Second, "a CPU value for pod bb", func() (bool, error) {
		v, ok, err := prom.query(q)
		cpu = v
		return ok && v > 0, err
	})
	t.Logf("%s = %g", q, cpu)
	// A LIST of our own: the agent and Prometheus's discovery stream their
	// lists (WatchList), so no other LIST is certain to have happened.
	if _, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	list := `apiserver_request_total{job="kubernetes-apiservers",verb="LIST",resource="pods",scope="namespace",code="200"}`
	waitFor(t, 30*time.Second, "the API server's count of our LIST scraped", func() (bool, error) {
		_, ok, err := prom.query(list)
		return ok, err
	})
	for _, q := range []string{
		fmt.Sprintf(`kubelet_node_name{job="kubernetes-nodes",node=%q}`, e.node), `orch_datastore_is_leader{job="kubernetes-apiservers"}`,
		fmt.Sprintf(`container_memory_working_set_bytes{namespace=%q,pod="bb",container="bb"}`, ns)} {
		if _, ok, err := prom.query(q); !ok || err != nil {
			t.Errorf("query %s: no result (%v)", q, err)
		}
	}
}

// prometheusBinary is $PROMETHEUS, else the upstream Prometheus that
// scripts/build-prometheus.sh builds from tools/prometheus (Debian's
// package lacks kubernetes_sd_configs).
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMETHEUS"); p != "" {
		return p
	}
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", filepath.Join(root, "scripts", "build-prometheus.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/build-prometheus.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// prometheusIdentity makes a ServiceAccount bound to a ClusterRole with the
// rules of Prometheus's own manifests and returns a token for it.
func prometheusIdentity(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	rbac := cs.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "nodes/metrics", "services", "endpoints", "pods"},
			Verbs: []string{"get", "list", "watch"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: ns}}}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus"}}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "prometheus",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// prometheusConfig is the usual Kubernetes scrape configuration (as in
// Prometheus's documentation/examples/prometheus-kubernetes.yml), scraping
// the nodes directly at the address kubernetes_sd_configs gives them
// (InternalIP and the kubelet port; 127.0.0.1 for the e2e node).
func prometheusConfig(api, caFile, tokenFile string) string {
	sd := func(role, extra string) string {
		return fmt.Sprintf(`    kubernetes_sd_configs:
      - role: %s
        api_server: %s
        tls_config: {ca_file: %s}
        authorization: {credentials_file: %s}
%s`, role, api, caFile, tokenFile, extra)
	}
	auth := fmt.Sprintf(`    scheme: https
    tls_config: {ca_file: %s}
    authorization: {credentials_file: %s}
`, caFile, tokenFile)
	return `global:
  scrape_interval: 3s
  scrape_timeout: 3s
scrape_configs:
  - job_name: kubernetes-apiservers
` + auth + sd("endpoints", "        namespaces: {names: [default]}\n") + `    relabel_configs:
      - source_labels: [__meta_kubernetes_namespace, __meta_kubernetes_service_name, __meta_kubernetes_endpoint_port_name]
        action: keep
        regex: default;kubernetes;https
  - job_name: kubernetes-nodes
` + auth + sd("node", "") + `    relabel_configs:
      - action: labelmap
        regex: __meta_kubernetes_node_label_(.+)
  - job_name: kubernetes-cadvisor
    metrics_path: /metrics/cadvisor
` + auth + sd("node", "") + `    relabel_configs:
      - action: labelmap
        regex: __meta_kubernetes_node_label_(.+)
`
}

// promServer is a Prometheus process on loopback.
type promServer struct {
	t    *testing.T
	base string
}

// startPrometheus runs bin with config on a free loopback port, its data
// under dir; the process is killed and waited for at cleanup.
func startPrometheus(t *testing.T, bin, dir, config string) *promServer {
	t.Helper()
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePorts(t, 1)[0])
	logFile := filepath.Join(dir, "prometheus.log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file", cfgFile, "--storage.tsdb.path", filepath.Join(dir, "data"),
		"--web.listen-address", addr, "--log.level", "info")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("prometheus log:\n%s", b)
		}
	})
	t.Logf("prometheus %s on %s with:\n%s", bin, addr, config)
	return &promServer{t: t, base: "http://" + addr}
}

func (p *promServer) get(path string, v any) error {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(p.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// targetsUp says whether each job has want targets, all up; the error
// tells what is not.
func (p *promServer) targetsUp(want map[string]int) (bool, error) {
	var r struct {
		Data struct {
			ActiveTargets []struct {
				ScrapePool string `json:"scrapePool"`
				ScrapeURL  string `json:"scrapeUrl"`
				Health     string `json:"health"`
				LastError  string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/targets", &r); err != nil {
		return false, err
	}
	up := map[string]int{}
	var problems []string
	for _, tg := range r.Data.ActiveTargets {
		if tg.Health == "up" {
			up[tg.ScrapePool]++
			continue
		}
		problems = append(problems, fmt.Sprintf("%s %s: %s %s", tg.ScrapePool, tg.ScrapeURL, tg.Health, tg.LastError))
	}
	for job, n := range want {
		if up[job] != n {
			problems = append(problems, fmt.Sprintf("%s: %d targets up, want %d", job, up[job], n))
		}
	}
	if len(problems) > 0 {
		return false, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return true, nil
}

// query runs an instant query and returns the first series' value.
func (p *promServer) query(q string) (float64, bool, error) {
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/query?query="+url.QueryEscape(q), &r); err != nil {
		return 0, false, err
	}
	if len(r.Data.Result) == 0 {
		return 0, false, nil
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, fmt.Errorf("value %q of %s: %w", s, q, err)
	}
	p.t.Logf("%s: %v = %g", q, r.Data.Result[0].Metric, v)
	return v, true, nil
}
