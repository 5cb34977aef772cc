package encryption

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/auth"
)

func m0() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// TestHandlerAndClient serves the endpoints over TLS with the cluster CA
// and drives them with Client and the admin certificate of the data dir.
func TestHandlerAndClient(t *testing.T) {
	dataDir := t.TempDir()
	bundle, err := pki.LoadOrCreate(filepath.Join(dataDir, "server", "tls"), pki.Options{AdvertiseAddress: "127.0.0.1", ClusterDomain: "cluster.local", ServiceCIDR: "10.43.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	inner := datastore.NewMemStore(0)
	s, m, err := Open(Path(dataDir), inner, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "api", http.StatusTeapot) })
	srv := httptest.NewUnstartedServer(NewHandler(m, auth.NewCertAuthenticator(bundle.CAPool()), zaptest.NewLogger(t)).Wrap(api))
	srv.TLS = bundle.ServerTLSConfig()
	srv.StartTLS()
	srv.TLS.Certificates = nil // serve the bundle's certificate (GetCertificate), not httptest's
	t.Cleanup(srv.Close)
	ctx := context.Background()
	cl, err := NewClient(srv.URL, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/registry/secrets/ns/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	st, err := cl.Status(ctx)
	if err != nil || !st.Enabled || st.ActiveKey != DefaultKeyName {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	st, err = cl.RotateKeys(ctx)
	if err != nil || st.ActiveKey == DefaultKeyName {
		t.Fatalf("RotateKeys = %+v, %v", st, err)
	}
	res, err := cl.Reencrypt(ctx)
	if err != nil || res.Rewritten != 1 {
		t.Fatalf("Reencrypt = %+v, %v", res, err)
	}
	// Other requests pass through to the API handler.
	resp, err := srv.Client().Get(srv.URL + "/api")
	if err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusTeapot {
			t.Fatalf("/api answered %d", resp.StatusCode)
		}
	}
	// No client certificate: 401; a non-admin certificate: 403; wrong method: 405.
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: bundle.CAPool()}}}
	if code := status(t, anon, http.MethodGet, srv.URL+StatusPath); code != http.StatusUnauthorized {
		t.Fatalf("anonymous status: %d", code)
	}
	certPEM, keyPEM, err := bundle.IssueClientCert("system:node:n1", []string{"system:nodes"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	node := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: bundle.CAPool(), Certificates: []tls.Certificate{cert}}}}
	if code := status(t, node, http.MethodPost, srv.URL+RotateKeyPath); code != http.StatusForbidden {
		t.Fatalf("node rotate-keys: %d", code)
	}
	err = cl.do(ctx, http.MethodGet, ReencryptPath, &res)
	if err == nil || !strings.Contains(err.Error(), "allowed: POST") {
		t.Fatalf("GET reencrypt: %v", err)
	}
}

func status(t *testing.T, c *http.Client, method, url string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestNewClientErrors(t *testing.T) {
	if _, err := NewClient("https://127.0.0.1:1", t.TempDir()); err == nil || !strings.Contains(err.Error(), "cluster CA") {
		t.Fatalf("NewClient without a data dir: %v", err)
	}
	dir := t.TempDir()
	_ = os.MkdirAll(filepath.Join(dir, "server", "tls"), 0o700)
	_ = os.WriteFile(filepath.Join(dir, "server", "tls", "ca.crt"), []byte("junk"), 0o600)
	if _, err := NewClient("https://127.0.0.1:1", dir); err == nil || !strings.Contains(err.Error(), "no PEM") {
		t.Fatalf("NewClient with a bad CA: %v", err)
	}
}
