package join

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/internal/pki"
)

// TestRenewWithNodeCertificate: a node presenting its client certificate
// and no token gets new certificates for itself only; other certificates
// of the CA and certificates of another CA are refused.
func TestRenewWithNodeCertificate(t *testing.T) {
	opts := pki.Options{Hostname: "h", HostIPs: func() ([]net.IP, error) { return []net.IP{net.ParseIP("127.0.0.1")}, nil }}
	b, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), opts)
	if err != nil {
		t.Fatal(err)
	}
	other, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), opts)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{CA: b, Token: testSecret, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = b.ServerTLSConfig()
	srv.StartTLS()
	defer srv.Close()
	srv.TLS.Certificates = nil
	cert := func(ca *pki.Bundle, cn string, orgs ...string) *tls.Certificate {
		c, k, err := ca.IssueClientCert(cn, orgs)
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return &pair
	}
	node1 := cert(b, "system:node:node-1", "system:nodes")
	for _, tc := range []struct {
		name  string
		cert  *tls.Certificate
		node  string
		code  int
		inMsg string
	}{
		{"own node", node1, "node-1", 200, ""},
		{"another node", node1, "node-2", 403, "only its own"},
		{"admin certificate", cert(b, pki.AdminUser, pki.AdminGroup), "node-1", 401, "not a node certificate"},
		{"foreign CA", cert(other, "system:node:node-1", "system:nodes"), "node-1", 401, "not a node certificate"},
		{"no certificate, no token", nil, "node-1", 401, "Authorization: Bearer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tlsCfg := &tls.Config{RootCAs: b.CAPool(), ServerName: "localhost"}
			if tc.cert != nil {
				tlsCfg.Certificates = []tls.Certificate{*tc.cert}
			}
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
			defer c.CloseIdleConnections()
			body, _ := json.Marshal(NodeCertificateRequest{NodeName: tc.node, CSRPEM: testCSR(t)})
			resp, err := c.Post(srv.URL+NodeCertificatePath, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			rec := httptest.NewRecorder()
			rec.Code = resp.StatusCode
			_, _ = rec.Body.ReadFrom(resp.Body)
			checkStatus(t, rec, tc.code, tc.inMsg)
		})
	}
}
