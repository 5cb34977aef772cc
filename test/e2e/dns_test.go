package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/dns"
	"github.com/orch/orch/agent/proxy"
	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// TestDNS: the agent answers the cluster DNS IP itself. A busybox pod
// resolves the kubernetes Service and a test Service (by its short name,
// through the search path), gets NXDOMAIN for an unknown name, and has the
// ClusterFirst resolv.conf. The cluster uses a cluster DNS IP of its own so
// it never meets another test's agent (or a real orch) on 10.43.0.10.
func TestDNS(t *testing.T) {
	e, dnsIP := dnsStartCluster(t)
	cs := e.server.Clientset
	link := dns.LinkName(e.bridge)
	dnsWaitLink(t, link, dnsIP)
	t.Run("kube-dns Service", func(t *testing.T) { dnsKubeDNSService(t, cs, dnsIP) })
	svc, err := cs.CoreV1().Services("default").Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "dnse2e-web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("pod lookups", func(t *testing.T) { dnsPodLookups(t, cs, dnsIP, svc.Spec.ClusterIP) })
	t.Run("host network pod", func(t *testing.T) { dnsHostNetworkPod(t, cs, dnsIP) })
	e.stopAgent()
	if _, err := netlink.LinkByName(link); err == nil {
		t.Errorf("%s still exists after the agent stopped", link)
	}
}

// dnsStartCluster is startCluster with --cluster-dns set to a random IP of
// the service CIDR on both the server and the agent.
func dnsStartCluster(t *testing.T) (*agentEnv, string) {
	requireHost(t)
	e := newAgentEnv(t)
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	dnsIP := fmt.Sprintf("10.43.%d.%d", 100+int(b[0])%150, 2+int(b[1])%250)
	e.server = testutil.StartServer(t, testutil.Options{Quiet: true,
		ExtraArgs: []string{"--cluster-cidr", e.podCIDR, "--cluster-dns", dnsIP}})
	tok, err := os.ReadFile(filepath.Join(e.server.DataDir, "server", "token"))
	if err != nil {
		t.Fatalf("reading the join token: %v", err)
	}
	e.token = strings.TrimSpace(string(tok))
	imgDir := filepath.Join(e.dataDir, "agent", "images")
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testimages.WriteBusyboxImage(filepath.Join(imgDir, "busybox.tar"), testimages.BusyboxPath,
		"docker.io/library/busybox:1.36"); err != nil {
		t.Fatal(err)
	}
	e.kubeletPort = testutil.FreePorts(t, 1)[0]
	dnsStartAgent(e, dnsIP)
	t.Cleanup(func() { // before e.cleanup: stop the agent, remove its DNS interface and proxy chains
		e.stopAgent()
		if l, err := netlink.LinkByName(dns.LinkName(e.bridge)); err == nil {
			_ = netlink.LinkDel(l)
		}
		if err := proxy.Cleanup(zaptest.NewLogger(t), proxy.Config{NodeName: e.node, Prefix: e.chainPfx}); err != nil {
			t.Logf("proxy chains cleanup: %v", err)
		}
	})
	return e, dnsIP
}

// dnsStartAgent is e.startAgent with --cluster-dns.
func dnsStartAgent(e *agentEnv, dnsIP string) {
	e.t.Helper()
	e.runs++
	e.logFile = filepath.Join(e.dataDir, fmt.Sprintf("agent-%d.log", e.runs))
	out, err := os.Create(e.logFile)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(testutil.Binary(e.t), append(e.args(), "--cluster-dns", dnsIP)...)
	cmd.Env = append(os.Environ(), "ORCH_TOKEN="+e.token)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("starting the agent: %v", err)
	}
	_ = out.Close()
	e.proc, e.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(e.done)
}

func dnsWaitLink(t *testing.T, name, ip string) {
	waitFor(t, 90*time.Second, "interface "+name+" with "+ip, func() (bool, error) {
		l, err := netlink.LinkByName(name)
		if err != nil {
			return false, err
		}
		addrs, err := netlink.AddrList(l, netlink.FAMILY_ALL)
		for _, a := range addrs {
			if a.IP.String() == ip {
				return true, nil
			}
		}
		return false, err
	})
}

func dnsKubeDNSService(t *testing.T, cs kubernetes.Interface, dnsIP string) {
	var svc *corev1.Service
	waitFor(t, 30*time.Second, "the kube-dns Service", func() (bool, error) {
		var err error
		svc, err = cs.CoreV1().Services("kube-system").Get(context.Background(), "kube-dns", metav1.GetOptions{})
		return err == nil, err
	})
	if svc.Labels["k8s-app"] != "kube-dns" || len(svc.Spec.Ports) != 2 {
		t.Errorf("kube-dns = %+v", svc)
	}
	if svc.Spec.ClusterIP != dnsIP {
		t.Errorf("kube-dns ClusterIP %s, want the server's --cluster-dns %s", svc.Spec.ClusterIP, dnsIP)
	}
}

func dnsPodLookups(t *testing.T, cs kubernetes.Interface, dnsIP, webIP string) {
	script := `cat /etc/resolv.conf
echo "== kubernetes"; nslookup kubernetes.default.svc.cluster.local
echo "== web"; nslookup dnse2e-web
echo "== unknown"; nslookup dnse2e-nosuch.default.svc.cluster.local
echo "== ptr"; nslookup 10.43.0.1
echo "== srv"; nslookup -type=srv _http._tcp.dnse2e-web.default.svc.cluster.local
echo "== done"`
	out := dnsRunPod(t, cs, "dnse2e-client", nil, script)
	sections := dnsSections(out)
	for _, want := range []string{"nameserver " + dnsIP, "search default.svc.cluster.local svc.cluster.local cluster.local", "options ndots:5"} {
		if !strings.Contains(sections[""], want) {
			t.Errorf("resolv.conf lacks %q", want)
		}
	}
	if !strings.Contains(sections["kubernetes"], "Address: 10.43.0.1") {
		t.Errorf("kubernetes.default.svc.cluster.local did not resolve to 10.43.0.1")
	}
	if !strings.Contains(sections["web"], "Address: "+webIP) {
		t.Errorf("dnse2e-web did not resolve to its ClusterIP %s", webIP)
	}
	if !strings.Contains(sections["unknown"], "NXDOMAIN") {
		t.Errorf("an unknown service name did not get NXDOMAIN")
	}
	if !strings.Contains(sections["ptr"], "kubernetes.default.svc.cluster.local") {
		t.Errorf("10.43.0.1 has no PTR to kubernetes.default.svc.cluster.local")
	}
	if !strings.Contains(sections["srv"], "80 dnse2e-web.default.svc.cluster.local") {
		t.Errorf("no SRV record for the http port of dnse2e-web")
	}
}

// dnsHostNetworkPod: ClusterFirstWithHostNet gives a host-network pod the
// cluster DNS, reachable from the host's namespace too.
func dnsHostNetworkPod(t *testing.T, cs kubernetes.Interface, dnsIP string) {
	out := dnsRunPod(t, cs, "dnse2e-hostnet", func(p *corev1.Pod) {
		p.Spec.HostNetwork, p.Spec.DNSPolicy = true, corev1.DNSClusterFirstWithHostNet
	}, "cat /etc/resolv.conf; echo '== kubernetes'; nslookup kubernetes.default.svc.cluster.local")
	sections := dnsSections(out)
	if !strings.Contains(sections[""], "nameserver "+dnsIP) || !strings.Contains(sections["kubernetes"], "Address: 10.43.0.1") {
		t.Errorf("host-network pod with ClusterFirstWithHostNet did not use the cluster DNS:\n%s", out)
	}
}

// dnsRunPod runs a busybox script to completion and returns its output.
func dnsRunPod(t *testing.T, cs kubernetes.Interface, name string, mutate func(*corev1.Pod), script string) string {
	c := bbContainer("c", script)
	c.ImagePullPolicy = corev1.PullIfNotPresent
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To(int64(1)),
		Containers: []corev1.Container{c}}}
	if mutate != nil {
		mutate(p)
	}
	createPod(t, cs, p)
	defer func() {
		_ = cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	}()
	waitPod(t, cs, name, "to finish", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	raw, err := cs.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s output:\n%s", name, raw)
	return string(raw)
}

// dnsSections splits the pod output at its "== name" lines.
func dnsSections(out string) map[string]string {
	m, cur := map[string]string{}, ""
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(line, "== "); ok {
			cur = name
			continue
		}
		m[cur] += line + "\n"
	}
	return m
}
