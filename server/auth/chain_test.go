package auth

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orch/orch/internal/pki"
)

// TestChainOverTLS wires pki's serving config, Union(cert, token) and the
// authorizer into a loopback HTTPS server and talks to it with client-go
// configured from a kubeconfig written by pki.WriteKubeconfig.
func TestChainOverTLS(t *testing.T) {
	b := newBundle(t)
	tokens, err := NewTokenAuthenticator(writeTokenFile(t, "tok-1,carol,uid-c\n"))
	if err != nil {
		t.Fatal(err)
	}
	authn := Union(NewCertAuthenticator(b.CAPool()), tokens)
	authz := NewAuthorizer(zaptest.NewLogger(t))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, err := authn.AuthenticateRequest(r)
		if err != nil || !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		allowed, reason, err := authz.Authorize(r.Context(), Attributes{User: u, Verb: "get", Path: r.URL.Path})
		if err != nil || !allowed {
			http.Error(w, reason, http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(u.Name))
	}))
	srv.TLS = b.ServerTLSConfig()
	srv.StartTLS()
	srv.TLS.Certificates = nil // serve the bundle's certificate (GetCertificate), not httptest's
	t.Cleanup(srv.Close)

	nodeCert, nodeKey, err := b.IssueClientCert("system:node:n1", []string{GroupNodes})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		cert, key []byte
		token     string
		want      int
	}{
		{"admin certificate", b.AdminCertPEM(), b.AdminKeyPEM(), "", http.StatusOK},
		{"node certificate", nodeCert, nodeKey, "", http.StatusForbidden},
		{"known token", nil, nil, "tok-1", http.StatusForbidden},
		{"unknown token", nil, nil, "nope", http.StatusUnauthorized},
		{"anonymous", nil, nil, "", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubeconfig")
			if err := pki.WriteKubeconfig(path, 0, srv.URL, b.CAPEM(), tt.cert, tt.key); err != nil {
				t.Fatal(err)
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", path)
			if err != nil {
				t.Fatal(err)
			}
			cfg.BearerToken = tt.token
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hc.Get(srv.URL + "/version")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}
