package ingress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// backend is an HTTP server on ip:port answering its name, the path and
// the X-Forwarded headers; an Upgrade request gets a raw echo.
func backend(t *testing.T, name, ip string, port int) (stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "websocket" {
			echo(w)
			return
		}
		fmt.Fprintf(w, "%s %s host=%s xff=%s xfh=%s xfp=%s", name, r.URL.Path, r.Host,
			r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Host"), r.Header.Get("X-Forwarded-Proto"))
	})}
	go func() { _ = srv.Serve(ln) }()
	var once sync.Once
	stop = func() { once.Do(func() { _ = srv.Close() }) }
	t.Cleanup(stop)
	return stop
}

// echo answers an upgrade with 101 and echoes the bytes that follow.
func echo(w http.ResponseWriter) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	_ = rw.Flush()
	_, _ = io.Copy(conn, rw)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// svcOn is service(name, ips...) with its endpoints on port.
func svcOn(name string, port int, ips ...string) (*corev1.Service, *discoveryv1.EndpointSlice) {
	svc, sl := service(name, ips...)
	p := int32(port)
	sl.Ports[0].Port = &p
	return svc, sl
}

type fixture struct {
	client          *fake.Clientset
	httpURL, https  string
	caPool          *x509.CertPool
	cancel          context.CancelFunc
	done            chan struct{}
	httpPort, tlsPt int
}

func start(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{client: fake.NewClientset(objs...), httpPort: freePort(t), tlsPt: freePort(t), done: make(chan struct{})}
	c, err := New(Config{Client: f.client, Logger: zaptest.NewLogger(t), BindAddress: "127.0.0.1",
		HTTPPort: f.httpPort, HTTPSPort: f.tlsPt, RetryBind: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() { defer close(f.done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-f.done })
	f.httpURL = fmt.Sprintf("http://127.0.0.1:%d", f.httpPort)
	f.https = fmt.Sprintf("127.0.0.1:%d", f.tlsPt)
	return f
}

func orchClass() *networkingv1.IngressClass {
	return &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: ClassName,
		Annotations: map[string]string{DefaultClassAnnotation: "true"}},
		Spec: networkingv1.IngressClassSpec{Controller: ControllerName}}
}

// get fetches path with a Host header; "" body on a transport error.
func get(client *http.Client, url, host string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// eventually retries check until it returns nil or 10 s pass.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err = check(); err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, err)
}

func expectBody(client *http.Client, url, host string, code int, contains string) func() error {
	return func() error {
		got, body, err := get(client, url, host)
		if err != nil {
			return err
		}
		if got != code || !strings.Contains(body, contains) {
			return fmt.Errorf("%s%s: %d %q, want %d with %q", host, url, got, body, code, contains)
		}
		return nil
	}
}

func hostIngress(name, host, svc string) *networkingv1.Ingress {
	return newIngress(name, 1, rule{host, []networkingv1.HTTPIngressPath{path(prefix, "/", svc)}})
}

func TestServeHostRulesWebSocketAnd404(t *testing.T) {
	pa, pb := freePort(t), freePort(t)
	backend(t, "a", "127.0.0.1", pa)
	backend(t, "b", "127.0.0.1", pb)
	svcA, slA := svcOn("web-a", pa, "127.0.0.1")
	svcB, slB := svcOn("web-b", pb, "127.0.0.1")
	f := start(t, orchClass(), svcA, slA, svcB, slB, hostIngress("a", "a.test", "web-a"), hostIngress("b", "b.test", "web-b"))
	c := &http.Client{Timeout: 5 * time.Second}
	eventually(t, "host a", expectBody(c, f.httpURL+"/x", "a.test", 200, "a /x host=a.test xff=127.0.0.1 xfh=a.test xfp=http"))
	eventually(t, "host b", expectBody(c, f.httpURL+"/y", "b.test:80", 200, "b /y"))
	eventually(t, "no rule", expectBody(c, f.httpURL+"/", "nobody.test", 404, "no Ingress rule"))
	t.Run("client X-Forwarded headers are replaced", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, f.httpURL+"/z", nil)
		req.Host = "a.test"
		req.Header.Set("X-Forwarded-For", "6.6.6.6")
		req.Header.Set("X-Forwarded-Proto", "https")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), "xff=127.0.0.1 xfh=a.test xfp=http") {
			t.Errorf("backend saw %q", body)
		}
	})
	t.Run("websocket", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(f.httpURL, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(conn, "GET /ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade: %v %v", resp, err)
		}
		_, _ = conn.Write([]byte("hello ws"))
		buf := make([]byte, 8)
		if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "hello ws" {
			t.Fatalf("echo: %q %v", buf, err)
		}
	})
	t.Run("no endpoints 503", func(t *testing.T) {
		if _, err := f.client.NetworkingV1().Ingresses("default").Create(context.Background(),
			hostIngress("c", "c.test", "nothing"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "host c", expectBody(c, f.httpURL+"/", "c.test", 503, "no ready endpoint"))
	})
}

func TestClassGatesListeners(t *testing.T) {
	f := start(t)
	c := &http.Client{Timeout: time.Second}
	if _, _, err := get(c, f.httpURL, "x"); err == nil {
		t.Fatal("serving without the IngressClass")
	}
	cls, err := f.client.NetworkingV1().IngressClasses().Create(context.Background(), orchClass(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "listening", expectBody(c, f.httpURL, "x", 404, ""))
	if err := f.client.NetworkingV1().IngressClasses().Delete(context.Background(), cls.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "port freed", func() error {
		ln, err := net.Listen("tcp", strings.TrimPrefix(f.httpURL, "http://"))
		if err == nil {
			ln.Close()
		}
		return err
	})
}

func TestPortTakenRetried(t *testing.T) {
	f := start(t)
	ln, err := net.Listen("tcp", strings.TrimPrefix(f.httpURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.NetworkingV1().IngressClasses().Create(context.Background(), orchClass(), metav1.CreateOptions{}); err != nil {
		ln.Close()
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	ln.Close()
	eventually(t, "listening once freed", expectBody(&http.Client{Timeout: time.Second}, f.httpURL, "x", 404, ""))
}

func tlsSecret(t *testing.T, host string) (*corev1.Secret, *x509.CertPool) {
	crt, key, _ := selfSigned(t, host)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(crt)
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secure-tls", Namespace: "default"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}}, pool
}

func TestServeTLSBySNIWithReload(t *testing.T) {
	p := freePort(t)
	backend(t, "s", "127.0.0.1", p)
	svc, sl := svcOn("secure", p, "127.0.0.1")
	sec, pool := tlsSecret(t, "secure.test")
	ing := hostIngress("s", "secure.test", "secure")
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"secure.test"}, SecretName: sec.Name}}
	f := start(t, orchClass(), svc, sl, sec, ing)
	client := func(pool *x509.CertPool) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{ForceAttemptHTTP2: true,
			TLSClientConfig: &tls.Config{ServerName: "secure.test", RootCAs: pool},
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "tcp", f.https)
			}}}
	}
	url := "https://secure.test/p"
	eventually(t, "https", expectBody(client(pool), url, "secure.test", 200, "s /p host=secure.test xff=127.0.0.1 xfh=secure.test xfp=https"))
	resp, err := client(pool).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s, want HTTP/2", resp.Proto)
	}
	// Another server name gets the default certificate, which the
	// Secret's CA does not sign.
	other := &tls.Config{ServerName: "other.test", RootCAs: pool}
	if conn, err := tls.Dial("tcp", f.https, other); err == nil {
		conn.Close()
		t.Error("the Ingress certificate was served for another name")
	}
	// A new certificate in the Secret is served without a restart.
	sec2, pool2 := tlsSecret(t, "secure.test")
	if _, err := f.client.CoreV1().Secrets("default").Update(context.Background(), sec2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reloaded certificate", expectBody(client(pool2), url, "secure.test", 200, "s /p"))
}

func TestRollingEndpointsNoFailures(t *testing.T) {
	p := freePort(t)
	stopOld := backend(t, "old", "127.0.0.1", p)
	svc, sl := svcOn("web", p, "127.0.0.1")
	f := start(t, orchClass(), svc, sl, hostIngress("w", "w.test", "web"))
	c := &http.Client{Timeout: 5 * time.Second}
	eventually(t, "old", expectBody(c, f.httpURL, "w.test", 200, "old"))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var failures []string
	var n int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			code, body, err := get(c, f.httpURL, "w.test")
			n++
			if err != nil || code != 200 {
				failures = append(failures, fmt.Sprintf("%d %q %v", code, body, err))
			}
		}
	}()
	setAddrs := func(ips ...string) {
		_, s := svcOn("web", p, ips...)
		if _, err := f.client.DiscoveryV1().EndpointSlices("default").Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
	}
	backend(t, "new", "127.0.0.2", p)
	setAddrs("127.0.0.1", "127.0.0.2")
	time.Sleep(200 * time.Millisecond)
	stopOld() // the old pod stops before its endpoint is removed
	time.Sleep(200 * time.Millisecond)
	setAddrs("127.0.0.2")
	eventually(t, "new only", expectBody(c, f.httpURL, "w.test", 200, "new"))
	time.Sleep(200 * time.Millisecond)
	cancel()
	<-done
	if len(failures) > 0 {
		t.Fatalf("%d of %d requests failed during the rollout, first: %s", len(failures), n, failures[0])
	}
	t.Logf("%d requests, none failed", n)
}
