package pki

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestKubectlTrustsBundle runs a real kubectl (path in $ORCH_KUBECTL, e.g.
// from scripts/build-kubectl.sh) with a kubeconfig from WriteKubeconfig
// against a loopback HTTPS server using ServerTLSConfig.
func TestKubectlTrustsBundle(t *testing.T) {
	kubectl := os.Getenv("ORCH_KUBECTL")
	if kubectl == "" {
		t.Skip("ORCH_KUBECTL not set")
	}
	b := mustLoad(t, t.TempDir(), testOpts(t))
	var sawAdmin atomic.Bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The listener only requests the certificate; verify it as the API
		// server's authenticator does.
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			leaf := r.TLS.PeerCertificates[0]
			_, err := leaf.Verify(x509.VerifyOptions{Roots: b.CAPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
			sawAdmin.Store(err == nil && leaf.Subject.CommonName == AdminUser)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2-orch"}`))
	}))
	srv.TLS = b.ServerTLSConfig()
	srv.StartTLS()
	srv.TLS.Certificates = nil // serve the bundle's certificate (GetCertificate), not httptest's
	t.Cleanup(srv.Close)
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	kc := filepath.Join(t.TempDir(), "orch.yaml")
	if err := WriteKubeconfig(kc, 0, url, b.CAPEM(), b.AdminCertPEM(), b.AdminKeyPEM()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kc, "get", "--raw", "/version")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "v1.37.2-orch") {
		t.Fatalf("kubectl: %v\n%s", err, out)
	}
	if !sawAdmin.Load() {
		t.Fatal("server did not see the admin client certificate")
	}
}
