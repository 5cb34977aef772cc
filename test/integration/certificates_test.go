package integration

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orch/orch/test/testutil"
)

// TestCertificateRotate stops a real server, runs `orch certificate
// rotate`, starts it again and checks it serves the rotated serving
// certificate (new serial, same CA) and that the admin kubeconfig it wrote
// still works.
func TestCertificateRotate(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	addr := fmt.Sprintf("127.0.0.1:%d", s.HTTPSPort)
	tlsDir := filepath.Join(s.DataDir, "server", "tls")
	before := servedSerial(t, addr, tlsDir)
	if err := s.Stop(); err != nil {
		t.Logf("orch server exited with %v on stop", err)
	}
	out := orchCLI(t, "certificate", "rotate", "--data-dir", s.DataDir)
	for _, name := range []string{"serving", "peer", "admin", "front-proxy-client"} {
		if !strings.Contains(out, "rotated "+name+" ") {
			t.Errorf("rotate did not report %s:\n%s", name, out)
		}
	}
	if check := orchCLI(t, "certificate", "check", "--data-dir", s.DataDir); !strings.Contains(check, "front-proxy-client") ||
		!strings.Contains(check, "serving") {
		t.Errorf("certificate check:\n%s", check)
	}
	onDisk := fileSerial(t, filepath.Join(tlsDir, "serving.crt"))
	if onDisk == before {
		t.Fatal("serving.crt was not rotated")
	}
	s.Restart()
	if got := servedSerial(t, addr, tlsDir); got != onDisk {
		t.Fatalf("the restarted server serves serial %s, want the rotated %s", got, onDisk)
	}
	if _, err := s.Clientset.Discovery().ServerVersion(); err != nil {
		t.Fatalf("admin kubeconfig after rotation: %v", err)
	}
}

func servedSerial(t *testing.T, addr, tlsDir string) string {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(tlsDir, "ca.crt"))
	must(t, err, "read CA")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "kubernetes", MinVersion: tls.VersionTLS12})
	must(t, err, "TLS dial %s", addr)
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func fileSerial(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err, "read %s", path)
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	must(t, err, "parse %s", path)
	return c.SerialNumber.String()
}

// TestCertificateRenewalWhileRunning starts a real server whose leaf
// certificates last two hours (always within the 90-day window) and are
// checked every two seconds (hidden test flags): it renews them without a
// restart, new TLS connections get the new serving certificate, the API
// keeps answering throughout, and the admin kubeconfig is written again
// with a renewed admin certificate that works.
func TestCertificateRenewalWhileRunning(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--leaf-cert-validity", "2h", "--cert-renew-check", "2s"}})
	addr := fmt.Sprintf("127.0.0.1:%d", s.HTTPSPort)
	tlsDir := filepath.Join(s.DataDir, "server", "tls")
	first := servedSerial(t, addr, tlsDir)
	kubeconfig, err := os.ReadFile(s.Kubeconfig)
	must(t, err, "read kubeconfig")
	ctx := ctxT(t)
	deadline := time.Now().Add(60 * time.Second)
	for servedSerial(t, addr, tlsDir) == first {
		if _, err := s.Clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("the API stopped answering while certificates were renewed: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the serving certificate was not renewed within 60s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !s.Running() {
		t.Fatal("the server restarted or exited")
	}
	for time.Now().Before(deadline) {
		if now, err := os.ReadFile(s.Kubeconfig); err == nil && string(now) != string(kubeconfig) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	must(t, err, "load the rewritten kubeconfig")
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "client")
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("the renewed admin kubeconfig does not work: %v", err)
	}
	if now, _ := os.ReadFile(s.Kubeconfig); string(now) == string(kubeconfig) {
		t.Fatal("the admin kubeconfig was not written again with the renewed admin certificate")
	}
}
