package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// TestIngressBench measures, in one run, what the built-in ingress costs
// (docs/benchmarks.md, "Built-in ingress"): the agent's RSS idle without
// the ingress (ports 0), with it, and with 100 Ingresses (each with its own
// Service); then requests/s of keep-alive GETs through the ingress and
// straight to the pod IP, same client, same backend. Opt-in:
// ORCH_BENCH_INGRESS=1 (it takes about three minutes).
func TestIngressBench(t *testing.T) {
	if os.Getenv("ORCH_BENCH_INGRESS") == "" {
		t.Skip("set ORCH_BENCH_INGRESS=1 to run the ingress benchmark")
	}
	settle := 45 * time.Second // memtune settles 30 s after start-up
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, false)
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := testimages.WriteImage(filepath.Join(e.dataDir, "agent", "images", "wsecho.tar"),
		[]testimages.File{{Name: "wsecho", Mode: 0o755, Data: buildStatic(t, root, "./test/images/wsecho")}},
		testimages.Config{Entrypoint: []string{"/wsecho"}}, "orch.test/wsecho:1"); err != nil {
		t.Fatal(err)
	}
	ws := corev1.Container{Name: "ws", Image: "orch.test/wsecho:1", ImagePullPolicy: corev1.PullNever,
		ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
			TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}}
	ingBackend(t, cs, "bench", 1, ws, 8080)
	ingCreate(t, cs, "bench", "bench.test", "", map[string]string{"/": "bench"})
	url := fmt.Sprintf("http://127.0.0.1:%d/", e.ingressPorts[0])
	waitFor(t, 90*time.Second, "bench.test through the ingress", func() (bool, error) {
		got, err := ingCurl("-H", "Host: bench.test", url)
		return strings.HasPrefix(got, "200 wsecho"), fmt.Errorf("%q %v", got, err)
	})
	rss := map[string]int64{}
	time.Sleep(settle)
	rss["with ingress, 1 Ingress"] = agentRSS(t, e)

	ports := e.ingressPorts
	e.ingressPorts = []int{0, 0}
	e.stopAgent()
	e.startAgent()
	waitNodeReady(t, e, false)
	time.Sleep(settle)
	rss["ingress off (ports 0)"] = agentRSS(t, e)
	e.ingressPorts = ports
	e.stopAgent()
	e.startAgent()
	waitNodeReady(t, e, false)

	for i := range 100 {
		name := fmt.Sprintf("bench-%03d", i)
		if _, err := cs.CoreV1().Services("default").Create(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: name + ".test", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name,
						Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}
		if _, err := cs.NetworkingV1().Ingresses("default").Create(context.Background(), ing, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 60*time.Second, "bench-099.test routed (503: no endpoints)", func() (bool, error) {
		got, err := ingCurl("-H", "Host: bench-099.test", url)
		return strings.HasPrefix(got, "503"), fmt.Errorf("%q %v", got, err)
	})
	time.Sleep(settle)
	rss["with ingress, 101 Ingresses"] = agentRSS(t, e)

	pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=bench"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("bench pods: %v %v", pods, err)
	}
	direct := fmt.Sprintf("http://%s:8080/", pods.Items[0].Status.PodIP)
	viaIngress := benchLoad(t, url, "bench.test")
	straight := benchLoad(t, direct, "")
	report := fmt.Sprintf("agent VmRSS: ingress off %d KiB; with ingress, 1 Ingress %d KiB; with 101 Ingresses + 101 Services %d KiB\n"+
		"keep-alive GETs, 16 clients, 10 s: through the ingress %.0f req/s; straight to the pod IP %.0f req/s\n",
		rss["ingress off (ports 0)"], rss["with ingress, 1 Ingress"], rss["with ingress, 101 Ingresses"], viaIngress, straight)
	t.Log(report)
	if out := os.Getenv("ORCH_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// agentRSS is the VmRSS (KiB) of the agent process itself (not its
// managed containerd).
func agentRSS(t *testing.T, e *agentEnv) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", e.proc.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// benchLoad runs 16 keep-alive clients for 10 s and returns requests/s;
// any failed request fails the test.
func benchLoad(t *testing.T, url, host string) float64 {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	var ok, failed atomic.Int64
	deadline := time.Now().Add(10 * time.Second)
	start := time.Now()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				if host != "" {
					req.Host = host
				}
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Add(1)
					continue
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Errorf("%s: %d requests failed", url, failed.Load())
	}
	return float64(ok.Load()) / time.Since(start).Seconds()
}
