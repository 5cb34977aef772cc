package auth

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/orch/orch/internal/pki"
)

func newBundle(t *testing.T) *pki.Bundle {
	t.Helper()
	b, err := pki.LoadOrCreate(t.TempDir(), pki.Options{Hostname: "h", HostIPs: func() ([]net.IP, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func clientCert(t *testing.T, b *pki.Bundle, cn string, orgs ...string) *x509.Certificate {
	t.Helper()
	certPEM, _, err := b.IssueClientCert(cn, orgs)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(certPEM)
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCertAuthenticator(t *testing.T) {
	b, other := newBundle(t), newBundle(t)
	servingBlk, _ := pem.Decode(mustRead(t, b.Dir()+"/"+pki.ServingCertFile))
	serving, _ := x509.ParseCertificate(servingBlk.Bytes)
	tests := []struct {
		name       string
		certs      []*x509.Certificate
		noTLS      bool
		wantOK     bool
		wantErr    bool
		wantName   string
		wantGroups []string
	}{
		{name: "no TLS", noTLS: true},
		{name: "no certificate"},
		{name: "admin", certs: []*x509.Certificate{clientCert(t, b, "system:admin", "system:masters")}, wantOK: true,
			wantName: "system:admin", wantGroups: []string{"system:masters", GroupAuthenticated}},
		{name: "node", certs: []*x509.Certificate{clientCert(t, b, "system:node:n1", "system:nodes")}, wantOK: true,
			wantName: "system:node:n1", wantGroups: []string{"system:nodes", GroupAuthenticated}},
		{name: "no groups", certs: []*x509.Certificate{clientCert(t, b, "alice")}, wantOK: true,
			wantName: "alice", wantGroups: []string{GroupAuthenticated}},
		{name: "other CA", certs: []*x509.Certificate{clientCert(t, other, "system:admin", "system:masters")}, wantErr: true},
		{name: "server-only certificate", certs: []*x509.Certificate{serving}, wantErr: true},
	}
	a := NewCertAuthenticator(b.CAPool())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "https://x/api", nil)
			if tt.noTLS {
				r.TLS = nil
			} else {
				r.TLS = &tls.ConnectionState{PeerCertificates: tt.certs}
			}
			u, ok, err := a.AuthenticateRequest(r)
			if tt.wantErr != (err != nil) || ok != tt.wantOK {
				t.Fatalf("ok=%v err=%v", ok, err)
			}
			if err != nil && !errors.Is(err, ErrInvalidCredentials) {
				t.Fatalf("error %v does not wrap ErrInvalidCredentials", err)
			}
			if ok && (u.Name != tt.wantName || !slices.Equal(u.Groups, tt.wantGroups)) {
				t.Fatalf("user %+v", u)
			}
		})
	}
}

// TestCertAuthenticatorCachesVerification checks that a certificate is
// verified once, stays accepted from the cache, and is checked again after
// it expires.
func TestCertAuthenticatorCachesVerification(t *testing.T) {
	b := newBundle(t)
	a := NewCertAuthenticator(b.CAPool())
	req := httptest.NewRequest("GET", "/", nil)
	req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{clientCert(t, b, "alice", "dev")}}
	u1, ok, err := a.AuthenticateRequest(req)
	if err != nil || !ok {
		t.Fatalf("first: %v %v", ok, err)
	}
	a.roots = x509.NewCertPool() // a cache miss would now fail verification
	u2, ok, err := a.AuthenticateRequest(req)
	if err != nil || !ok || u2 != u1 {
		t.Fatalf("cached: %v %v %v", u2, ok, err)
	}
	a.now = func() time.Time { return time.Now().Add(100 * 365 * 24 * time.Hour) }
	if _, _, err := a.AuthenticateRequest(req); err == nil {
		t.Fatal("an expired cache entry was still accepted")
	}
}
