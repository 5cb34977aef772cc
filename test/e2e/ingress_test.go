package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	agentingress "github.com/orch/orch/agent/ingress"
	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// TestIngress runs the built-in Ingress controller on a real node, on the
// agent's test ports (never the host's 80 and 443): two Ingresses with host
// rules answer curl on the node address, a TLS Ingress answers by SNI with
// the certificate of its Secret over HTTP/2 (and the new one once the
// Secret changes), a host without a rule gets the
// 404 of the default backend, a WebSocket echoes through the ingress, the
// Ingress status lists the node address, and a rolling update of a
// backend Deployment drops no request of a client looping through it.
func TestIngress(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, false)
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	err = testimages.WriteImage(filepath.Join(e.dataDir, "agent", "images", "wsecho.tar"),
		[]testimages.File{{Name: "wsecho", Mode: 0o755, Data: buildStatic(t, root, "./test/images/wsecho")}},
		testimages.Config{Entrypoint: []string{"/wsecho"}}, "orch.test/wsecho:1")
	if err != nil {
		t.Fatal(err)
	}
	httpd := func(site string) corev1.Container {
		c := bbContainer("web", "mkdir -p /www && echo "+site+" > /www/index.html && exec httpd -f -p 80 -h /www")
		c.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1,
			ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
		return c
	}
	ws := corev1.Container{Name: "ws", Image: "orch.test/wsecho:1", ImagePullPolicy: corev1.PullNever}
	ingBackend(t, cs, "ing-a", 2, httpd("site-a"), 80)
	ingBackend(t, cs, "ing-b", 1, httpd("site-b"), 80)
	ingBackend(t, cs, "ing-ws", 1, ws, 8080)
	crt, key := ingSelfSigned(t, "secure.test")
	if _, err := cs.CoreV1().Secrets("default").Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "secure-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ingCreate(t, cs, "ing-a", "a.test", "", map[string]string{"/": "ing-a", "/ws": "ing-ws"})
	ingCreate(t, cs, "ing-b", "b.test", "", map[string]string{"/": "ing-b"})
	ingCreate(t, cs, "ing-tls", "secure.test", "secure-tls", map[string]string{"/": "ing-b"})

	httpURL := fmt.Sprintf("http://127.0.0.1:%d/", e.ingressPorts[0])
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, crt, 0o600); err != nil {
		t.Fatal(err)
	}
	secure := fmt.Sprintf("secure.test:%d:127.0.0.1", e.ingressPorts[1])
	secureURL := fmt.Sprintf("https://secure.test:%d/", e.ingressPorts[1])
	for _, c := range []struct {
		what, want string
		args       []string
	}{
		{"host a.test", "200 site-a", []string{"-H", "Host: a.test", httpURL}},
		{"host b.test", "200 site-b", []string{"-H", "Host: b.test", httpURL}},
		{"TLS by SNI over HTTP/2", "200 site-b", []string{"--http2", "--resolve", secure, "--cacert", ca, secureURL}},
		{"default backend", "404 404 page not found", []string{"-H", "Host: nothing.test", httpURL}},
	} {
		waitFor(t, 90*time.Second, c.what, func() (bool, error) {
			got, err := ingCurl(c.args...)
			return strings.HasPrefix(got, c.want), fmt.Errorf("curl %v: %q, want %q (%v)", c.args, got, c.want, err)
		})
	}
	if v, err := ingCurl("-o", "/dev/null", "-w", "%{http_version}", "--http2", "--resolve", secure, "--cacert", ca, secureURL); err != nil || v != "2" {
		t.Errorf("HTTPS protocol %q (%v), want HTTP/2", v, err)
	}
	ingRotateCert(t, cs, secure, secureURL)
	ingWebSocket(t, e.ingressPorts[0])
	waitFor(t, 30*time.Second, "Ingress status with the node address", func() (bool, error) {
		ing, err := cs.NetworkingV1().Ingresses("default").Get(context.Background(), "ing-a", metav1.GetOptions{})
		return err == nil && len(ing.Status.LoadBalancer.Ingress) == 1 && ing.Status.LoadBalancer.Ingress[0].IP == "127.0.0.1", err
	})
	ingRollingUpdate(t, cs, httpURL)
}

// ingRotateCert puts a new certificate in the TLS Secret: the ingress
// serves it without a restart.
func ingRotateCert(t *testing.T, cs kubernetes.Interface, resolve, url string) {
	t.Helper()
	crt, key := ingSelfSigned(t, "secure.test")
	ca := filepath.Join(t.TempDir(), "ca2.pem")
	if err := os.WriteFile(ca, crt, 0o600); err != nil {
		t.Fatal(err)
	}
	sec, err := cs.CoreV1().Secrets("default").Get(context.Background(), "secure-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data = map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}
	if _, err := cs.CoreV1().Secrets("default").Update(context.Background(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the rotated certificate served", func() (bool, error) {
		got, err := ingCurl("--resolve", resolve, "--cacert", ca, url)
		return strings.HasPrefix(got, "200 site-b"), fmt.Errorf("%q %v", got, err)
	})
}

// ingCurl runs curl and returns "<status> <body>" (or curl's -w output).
func ingCurl(args ...string) (string, error) {
	if len(args) > 0 && args[0] != "-o" {
		args = append([]string{"-w", "\n%{http_code}"}, args...)
	}
	out, err := exec.Command("curl", append([]string{"-sS", "--max-time", "5"}, args...)...).CombinedOutput()
	s := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 && args[0] != "-o" {
		s = s[i+1:] + " " + strings.TrimSpace(s[:i])
	}
	return s, err
}

// ingBackend creates a Deployment of replicas pods of c and a Service of
// the same name, port 80 to the container's port.
func ingBackend(t *testing.T, cs kubernetes.Interface, name string, replicas int32, c corev1.Container, port int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(1))}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To(int64(3)), Containers: []corev1.Container{c}}}}}
	if _, err := cs.AppsV1().Deployments("default").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Deployment %s: %v", name, err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Selector: labels,
		Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}}}}
	if _, err := cs.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Service %s: %v", name, err)
	}
}

// ingCreate creates an Ingress for host with paths (Prefix) to Services,
// TLS from secret when set. Its class is left to the default (orch).
func ingCreate(t *testing.T, cs kubernetes.Interface, name, host, secret string, paths map[string]string) {
	t.Helper()
	rule := networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{}}}
	for p, svc := range paths {
		rule.HTTP.Paths = append(rule.HTTP.Paths, networkingv1.HTTPIngressPath{Path: p, PathType: ptr.To(networkingv1.PathTypePrefix),
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc,
				Port: networkingv1.ServiceBackendPort{Number: 80}}}})
	}
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{rule}}}
	if secret != "" {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: secret}}
	}
	// The IngressClass comes from the leader's ingress controller: wait
	// for it, so admission defaults the new Ingress's class to it.
	waitFor(t, 30*time.Second, "IngressClass "+agentingress.ClassName, func() (bool, error) {
		_, err := cs.NetworkingV1().IngressClasses().Get(context.Background(), agentingress.ClassName, metav1.GetOptions{})
		return err == nil, err
	})
	if _, err := cs.NetworkingV1().Ingresses("default").Create(context.Background(), ing, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Ingress %s: %v", name, err)
	}
}

func ingSelfSigned(t *testing.T, host string) (crt, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// ingWebSocket opens ws://a.test/ws through the ingress and checks the echo.
func ingWebSocket(t *testing.T, port int) {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, NetDial: func(string, string) (net.Conn, error) {
		return net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	}}
	var conn *websocket.Conn
	waitFor(t, 60*time.Second, "WebSocket upgrade through the ingress", func() (bool, error) {
		c, resp, err := d.Dial("ws://a.test/ws", nil)
		if resp != nil {
			_ = resp.Body.Close()
		}
		conn = c
		return err == nil, err
	})
	defer conn.Close()
	for _, msg := range []string{"hello", "through the orch ingress"} {
		_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if _, got, err := conn.ReadMessage(); err != nil || string(got) != msg {
			t.Fatalf("WebSocket echo %q, %v; want %q", got, err, msg)
		}
	}
}

// ingRollingUpdate loops GETs of a.test while the ing-a Deployment rolls
// to a new template; every request must succeed.
func ingRollingUpdate(t *testing.T, cs kubernetes.Interface, url string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var n int
	var failures []string
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Host = "a.test"
			resp, err := client.Do(req)
			var body []byte
			if err == nil {
				body, _ = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
			}
			mu.Lock()
			n++
			if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), "site-a") {
				failures = append(failures, fmt.Sprintf("%v %q", err, body))
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	})
	stopLoop := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoop()
	time.Sleep(time.Second)
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"e2e/rollout":"%d"}}}}}`, time.Now().UnixNano())
	if _, err := cs.AppsV1().Deployments("default").Patch(context.Background(), "ing-a", types.StrategicMergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "ing-a rolled out, old pods gone", func() (bool, error) {
		d, err := cs.AppsV1().Deployments("default").Get(context.Background(), "ing-a", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=ing-a"})
		if err != nil {
			return false, err
		}
		return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == 2 && d.Status.ReadyReplicas == 2 &&
			d.Status.Replicas == 2 && len(pods.Items) == 2, fmt.Errorf("status %+v, %d pods", d.Status, len(pods.Items))
	})
	time.Sleep(time.Second)
	stopLoop()
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("%d of %d requests failed during the rolling update; first: %s", len(failures), n, failures[0])
	}
	t.Logf("rolling update: %d requests through the ingress, none failed", n)
}
