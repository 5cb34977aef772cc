package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/agent/proxy"
	"github.com/orch/orch/test/testutil"
)

// TestProxy runs the Service proxy on a real node: two busybox httpd
// backends behind a NodePort Service; a client pod reaches both through the
// ClusterIP and the NodePort on the node's bridge address, a backend
// reaches itself through the Service (hairpin), the host reaches the
// NodePort on 127.0.0.1, and deleting the Service removes its rules.
func TestProxy(t *testing.T) {
	e := startCluster(t)
	t.Cleanup(func() { proxyCleanup(t, e) }) // runs before the agent env's cleanup
	cs := e.server.Clientset
	waitNodeReady(t, e, false)
	svc := proxyCreateService(t, cs)
	ip, nodePort := svc.Spec.ClusterIP, svc.Spec.Ports[0].NodePort
	for _, name := range []string{"proxy-a", "proxy-b"} {
		httpd := bbContainer("httpd", "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 80 -h /www")
		cs := []corev1.Container{httpd}
		if name == "proxy-a" { // hairpin: the pod reaching itself through its Service
			cs = append(cs, bbContainer("hairpin", "sleep 3600"))
		}
		createPod(t, e.server.Clientset, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "proxy-web"}},
			Spec: corev1.PodSpec{NodeName: e.node, Containers: cs}})
	}
	var podIPs []string
	for _, name := range []string{"proxy-a", "proxy-b"} {
		podIPs = append(podIPs, waitPod(t, cs, name, "Running and Ready", podReady).Status.PodIP)
	}
	proxyEnsureSlice(t, cs, podIPs)
	waitFor(t, 20*time.Second, "DNAT rules to both backends", func() (bool, error) {
		nat := proxyOurs(t, e, "nat")
		return strings.Contains(nat, "--to-destination "+podIPs[0]+":80") && strings.Contains(nat, "--to-destination "+podIPs[1]+":80"), nil
	})
	gw := proxyGateway(t, e)
	client := bbContainer("client", proxyFetchLoop(ip, 80, 30))
	nodePortClient := bbContainer("nodeport", proxyFetchLoop(gw, nodePort, 4))
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "proxy-client"}, Spec: corev1.PodSpec{NodeName: e.node,
		Containers: []corev1.Container{client, nodePortClient}}})

	clusterIP := proxyLog(t, e, "proxy-client", "client", 30)
	if clusterIP["proxy-a"] == 0 || clusterIP["proxy-b"] == 0 {
		t.Errorf("the client reached %v through the ClusterIP, want both backends", clusterIP)
	}
	if np := proxyLog(t, e, "proxy-client", "nodeport", 4); np["proxy-a"]+np["proxy-b"] < 4 {
		t.Errorf("the client reached %v through the NodePort on the node's bridge address", np)
	}
	if hp := proxyHairpin(t, e, ip); hp["proxy-a"] == 0 {
		t.Errorf("proxy-a reached %v through its Service, never itself (hairpin)", hp)
	}
	proxyHostGet(t, fmt.Sprintf("http://127.0.0.1:%d/", nodePort))
	proxyLoadBalancer(t, cs)
	proxyDeleteRemovesRules(t, e, cs, ip)
}

// proxyFetchLoop GETs http://host:port/ n times successfully (retrying
// failures), each answer's body on its own "got" line, then prints DONE
// and sleeps. It uses nc: the static busybox's wget crashes.
func proxyFetchLoop(host string, port int32, n int) string {
	return fmt.Sprintf(`n=0; tries=0; while [ $n -lt %d ] && [ $tries -lt 300 ]; do tries=$((tries+1)); `+
		`out=$(printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 %s %d | tail -n 1); `+
		`if [ -n "$out" ]; then echo "got $out"; n=$((n+1)); else echo fail; sleep 0.5; fi; done; echo DONE %s:%d; sleep 3600`, n, host, port, host, port)
}

func proxyCreateService(t *testing.T, cs kubernetes.Interface) *corev1.Service {
	t.Helper()
	svc, err := cs.CoreV1().Services("default").Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "proxy-web"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "proxy-web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the service: %v", err)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("service got clusterIP %q nodePort %d", svc.Spec.ClusterIP, svc.Spec.Ports[0].NodePort)
	}
	return svc
}

// proxyEnsureSlice waits for the EndpointSlice controller to list both
// backends; without it (it may not be registered), the test writes the
// slice itself, as a selector-less Service's owner would.
func proxyEnsureSlice(t *testing.T, cs kubernetes.Interface, ips []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		sl, err := cs.DiscoveryV1().EndpointSlices("default").List(context.Background(),
			metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=proxy-web"})
		if err == nil && proxyReadyEndpoints(sl.Items) >= len(ips) {
			t.Logf("EndpointSlice from the controller: %d ready endpoints", proxyReadyEndpoints(sl.Items))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("no EndpointSlice controller output after 20s: creating the EndpointSlice in the test")
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "proxy-web-test",
		Labels: map[string]string{discoveryv1.LabelServiceName: "proxy-web", discoveryv1.LabelManagedBy: "e2e-proxy"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(80)), Protocol: ptr.To(corev1.ProtocolTCP)}}}
	for _, ip := range ips {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("default").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the EndpointSlice: %v", err)
	}
}

func proxyReadyEndpoints(items []discoveryv1.EndpointSlice) int {
	n := 0
	for _, s := range items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n++
			}
		}
	}
	return n
}

// proxyGateway is the bridge's address (the node as pods see it).
func proxyGateway(t *testing.T, e *agentEnv) string {
	t.Helper()
	_, n, err := net.ParseCIDR(e.podCIDR)
	if err != nil {
		t.Fatal(err)
	}
	gw := n.IP.To4()
	gw[3]++
	return gw.String()
}

// proxyLog waits for the container's loop to finish and counts the
// backends that answered.
func proxyLog(t *testing.T, e *agentEnv, pod, container string, want int) map[string]int {
	t.Helper()
	var out string
	deadline := time.Now().Add(120 * time.Second)
	for !strings.Contains(out, "DONE") {
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s did not finish its requests; log:\n%s\nnat rules:\n%s", pod, container, out, proxyOurs(t, e, "nat"))
		}
		time.Sleep(time.Second)
		b, _ := e.server.Clientset.CoreV1().Pods("default").GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(context.Background())
		out = string(b)
	}
	seen, got := proxyCount(out)
	if got < want {
		t.Errorf("%s/%s got %d answers, want %d; log:\n%s", pod, container, got, want, out)
	}
	t.Logf("%s/%s: %v, %d failed tries", pod, container, seen, strings.Count(out, "fail\n"))
	return seen
}

// proxyCount counts the "got <backend>" lines.
func proxyCount(out string) (map[string]int, int) {
	seen, got := map[string]int{}, 0
	for _, l := range strings.Split(out, "\n") {
		if b, ok := strings.CutPrefix(l, "got "); ok && strings.TrimSpace(b) != "" {
			seen[strings.TrimSpace(b)]++
			got++
		}
	}
	return seen, got
}

// proxyHairpin has proxy-a fetch its own Service 20 times (once both
// endpoints are programmed), with the real kubectl exec.
func proxyHairpin(t *testing.T, e *agentEnv, ip string) map[string]int {
	t.Helper()
	loop := strings.TrimSuffix(proxyFetchLoop(ip, 80, 20), "; sleep 3600")
	out, err := exec.Command(testutil.Kubectl(t), "--kubeconfig", e.server.Kubeconfig, "exec", "proxy-a", "-c", "hairpin", "--",
		"sh", "-c", loop).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl exec: %v\n%s", err, out)
	}
	seen, got := proxyCount(string(out))
	if got < 20 {
		t.Errorf("proxy-a got %d answers through its Service, want 20:\n%s", got, out)
	}
	t.Logf("proxy-a/hairpin: %v, %d failed tries", seen, strings.Count(string(out), "fail\n"))
	return seen
}

// proxyOurs is the table's lines that mention the agent's chain prefix.
func proxyOurs(t *testing.T, e *agentEnv, table string) string {
	var b strings.Builder
	for _, l := range strings.Split(proxySave(t, table), "\n") {
		if strings.Contains(l, e.chainPfx) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// proxyHostGet: the host gets an answer from a backend at url.
func proxyHostGet(t *testing.T, url string) {
	t.Helper()
	c := &http.Client{Timeout: 3 * time.Second}
	waitFor(t, 30*time.Second, "a backend's answer on "+url, func() (bool, error) {
		resp, err := c.Get(url)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body := strings.TrimSpace(string(b))
		return err == nil && (body == "proxy-a" || body == "proxy-b"), err
	})
}

// proxyLoadBalancer: a LoadBalancer Service gets the node's address as its
// ingress (servicelb) and answers there on its port (127.0.0.1 here, on
// an unusual port so nothing of the host is shadowed).
func proxyLoadBalancer(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	_, err := cs.CoreV1().Services("default").Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "proxy-lb"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "proxy-web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 18481, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the LoadBalancer service: %v", err)
	}
	waitFor(t, 30*time.Second, "the load balancer ingress 127.0.0.1", func() (bool, error) {
		s, err := cs.CoreV1().Services("default").Get(context.Background(), "proxy-lb", metav1.GetOptions{})
		return err == nil && len(s.Status.LoadBalancer.Ingress) == 1 && s.Status.LoadBalancer.Ingress[0].IP == "127.0.0.1", err
	})
	proxyHostGet(t, "http://127.0.0.1:18481/")
	if err := cs.CoreV1().Services("default").Delete(context.Background(), "proxy-lb", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

var (
	proxyIPTOnce sync.Once
	proxyIPT     string // the iptables command the agent detects too
)

// proxySave is iptables-save of a table with the agent's backend.
func proxySave(t *testing.T, table string) string {
	t.Helper()
	proxyIPTOnce.Do(func() { proxyIPT = network.DetectIPTables(zaptest.NewLogger(t)) })
	cmd := proxyIPT
	out, err := exec.Command(cmd+"-save", "-t", table).Output()
	if err != nil {
		t.Fatalf("%s-save: %v", cmd, err)
	}
	return string(out)
}

func proxyDeleteRemovesRules(t *testing.T, e *agentEnv, cs kubernetes.Interface, ip string) {
	t.Helper()
	nat := proxySave(t, "nat")
	if !strings.Contains(nat, "-d "+ip+"/32") {
		t.Errorf("no rule for %s under %s in the nat table:\n%s", ip, e.chainPfx, proxyOurs(t, e, "nat"))
	}
	chains := map[string]bool{} // the service's own chains
	for _, l := range strings.Split(nat, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "-A" && strings.Contains(l, "default/proxy-web") &&
			!strings.HasSuffix(f[1], "SERVICES") && !strings.HasSuffix(f[1], "NODEPORTS") {
			chains[f[1]] = true
		}
	}
	if len(chains) < 4 { // SVC, EXT and two SEP
		t.Errorf("service chains %v, want SVC, EXT and 2 SEP", chains)
	}
	if err := cs.CoreV1().Services("default").Delete(context.Background(), "proxy-web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the service's rules and chains to go", func() (bool, error) {
		nat := proxySave(t, "nat")
		for c := range chains {
			if strings.Contains(nat, ":"+c+" ") {
				return false, fmt.Errorf("%s still there", c)
			}
		}
		return !strings.Contains(nat, "default/proxy-web"), nil
	})
}

// proxyCleanup stops the agent and removes its proxy chains and jumps (the
// agent leaves them in place on exit, as kube-proxy does), then checks
// nothing of the proxy is left.
func proxyCleanup(t *testing.T, e *agentEnv) {
	for _, p := range []string{"proxy-client", "proxy-a", "proxy-b"} {
		_ = e.server.Clientset.CoreV1().Pods("default").Delete(context.Background(), p, metav1.DeleteOptions{})
	}
	for _, s := range []string{"proxy-web", "proxy-lb"} {
		_ = e.server.Clientset.CoreV1().Services("default").Delete(context.Background(), s, metav1.DeleteOptions{})
	}
	err := e.server.Clientset.DiscoveryV1().EndpointSlices("default").Delete(context.Background(), "proxy-web-test", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Logf("deleting the test EndpointSlice: %v", err)
	}
	e.stopAgent()
	if err := proxy.Cleanup(zaptest.NewLogger(t), proxy.Config{Prefix: e.chainPfx}); err != nil {
		t.Errorf("proxy cleanup: %v", err)
	}
	for _, table := range []string{"nat", "filter"} {
		out := proxySave(t, table)
		for _, c := range []string{"SERVICES", "NODEPORTS", "MARK-MASQ", "PROXY-POST", "EXTERNAL-SVC", "PROXY-FORWARD", "PROXY-FIREWALL", "SVC-", "SEP-"} {
			if strings.Contains(out, e.chainPfx+c) {
				t.Errorf("%s%s left in %s after cleanup", e.chainPfx, c, table)
			}
		}
	}
}
