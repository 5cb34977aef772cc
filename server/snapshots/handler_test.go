package snapshots

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/internal/pki"
)

// TestHandlerAuthAndSave serves the endpoint with the cluster's serving TLS
// config and checks who may save a snapshot.
func TestHandlerAuthAndSave(t *testing.T) {
	s, b := testStore(t, 2)
	dir := t.TempDir()
	h := NewHandler(s, dir, "n1", b.CAPool(), zaptest.NewLogger(t))
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewUnstartedServer(h.Wrap(next))
	srv.TLS = b.ServerTLSConfig()
	srv.StartTLS()
	srv.TLS.Certificates = nil // serve the bundle's certificate (GetCertificate), not httptest's
	defer srv.Close()
	ctx := context.Background()

	c, err := NewClient(srv.URL, b.Dir())
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Save(ctx, SaveRequest{Name: "before-upgrade"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Name, "before-upgrade-n1-") || info.Revision != 2 || info.Location != "file://"+filepath.Join(dir, info.Name) {
		t.Fatalf("info %+v", info)
	}
	other := t.TempDir()
	if info, err := c.Save(ctx, SaveRequest{Dir: other}); err != nil || !strings.HasPrefix(info.Name, OnDemandName+"-n1-") ||
		info.Location != "file://"+filepath.Join(other, info.Name) {
		t.Fatalf("save into --etcd-snapshot-dir: %+v, %v", info, err)
	}
	if _, err := c.Save(ctx, SaveRequest{Name: "../evil"}); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := c.Save(ctx, SaveRequest{Dir: "relative"}); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("relative dir: %v", err)
	}

	nodeCert, nodeKey, err := b.IssueClientCert("system:node:x", []string{"system:nodes"})
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), pki.Options{AdvertiseAddress: "127.0.0.1",
		ClusterDomain: "cluster.local", ServiceCIDR: "10.43.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		certs  []tls.Certificate
		method string
		path   string
		want   int
	}{
		{"no client certificate", nil, http.MethodPost, Path, http.StatusUnauthorized},
		{"other CA's admin", []tls.Certificate{pair(t, stranger.AdminCertPEM(), stranger.AdminKeyPEM())}, http.MethodPost, Path, http.StatusUnauthorized},
		{"node certificate", []tls.Certificate{pair(t, nodeCert, nodeKey)}, http.MethodPost, Path, http.StatusForbidden},
		{"admin GET", []tls.Certificate{pair(t, b.AdminCertPEM(), b.AdminKeyPEM())}, http.MethodGet, Path, http.StatusMethodNotAllowed},
		{"other paths pass through", nil, http.MethodPost, "/api", http.StatusTeapot},
	} {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(b.CAPEM())
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: tc.certs}}}
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	if list, _ := List(dir); len(list) != 1 {
		t.Fatalf("snapshots after the refused requests: %+v", list)
	}
}

func pair(t *testing.T, certPEM, keyPEM []byte) tls.Certificate {
	t.Helper()
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
