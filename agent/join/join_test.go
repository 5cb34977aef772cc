package join

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/auth"
	serverjoin "github.com/orch/orch/server/join"
)

type joinEnv struct {
	bundle   *pki.Bundle
	token    string
	srv      *httptest.Server
	certReqs atomic.Int32 // POSTs that reached the join handler
}

// newJoinEnv serves the real join handler in front of a "whoami" handler
// that authenticates client certificates like the API server does.
func newJoinEnv(t *testing.T) *joinEnv {
	t.Helper()
	b, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), pki.Options{
		Hostname: "testhost", Logger: zaptest.NewLogger(t),
		HostIPs: func() ([]net.IP, error) { return []net.IP{net.ParseIP("127.0.0.1")}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &joinEnv{bundle: b, token: pki.FormatToken(pki.CAHash(b.CAPEM()), "s3cret-s3cret")}
	h, err := serverjoin.New(serverjoin.Config{CA: b, Token: e.token, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	certAuth := auth.NewCertAuthenticator(b.CAPool())
	whoami := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, err := certAuth.AuthenticateRequest(r)
		if err != nil || !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, u.Name+" "+strings.Join(u.Groups, ","))
	})
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == serverjoin.NodeCertificatePath {
			e.certReqs.Add(1)
		}
		h.Wrap(whoami).ServeHTTP(w, r)
	})
	e.srv = httptest.NewUnstartedServer(counted)
	e.srv.TLS = b.ServerTLSConfig()
	e.srv.StartTLS()
	e.srv.TLS.Certificates = nil // serve the bundle's certificate (GetCertificate), not httptest's
	t.Cleanup(e.srv.Close)
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestJoinEndToEnd(t *testing.T) {
	e := newJoinEnv(t)
	dir := filepath.Join(t.TempDir(), "agent")
	creds, err := Join(ctxT(t), e.srv.URL, e.token, "node-1", dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	if creds.Reused {
		t.Error("first join reported reused credentials")
	}
	if got := whoami(t, e, creds.KubeconfigPath); got != "system:node:node-1 system:nodes,system:authenticated" {
		t.Errorf("issued certificate authenticates as %q", got)
	}
	for name, mode := range map[string]os.FileMode{KeyFile: 0o600, KubeconfigFile: 0o600,
		ServingKeyFile: 0o600, ServingCertFile: 0o600} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: %v mode %v, want %v", name, err, st.Mode().Perm(), mode)
		}
	}
	// A restart reuses what is stored: no new request reaches the server.
	before := e.certReqs.Load()
	again, err := Join(ctxT(t), e.srv.URL, e.token, "node-1", dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("second Join: %v", err)
	}
	if !again.Reused || e.certReqs.Load() != before || string(again.CertPEM) != string(creds.CertPEM) {
		t.Errorf("restart did not reuse the stored credentials (reused=%v, requests %d→%d)", again.Reused, before, e.certReqs.Load())
	}
	// Another server URL for the same cluster is written into the kubeconfig.
	alt := strings.Replace(e.srv.URL, "127.0.0.1", "localhost", 1)
	moved, err := Join(ctxT(t), alt, e.token, "node-1", dir, zaptest.NewLogger(t))
	if err != nil || !moved.Reused {
		t.Fatalf("Join with another URL: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", moved.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != alt {
		t.Errorf("kubeconfig server %s, want %s", cfg.Host, alt)
	}
	// Credentials about to expire are replaced.
	renewed, err := JoinWithOptions(ctxT(t), Options{ServerURL: e.srv.URL, Token: e.token, NodeName: "node-1", Dir: dir,
		Logger: zaptest.NewLogger(t), RenewBefore: 400 * 24 * time.Hour})
	if err != nil || renewed.Reused || e.certReqs.Load() != before+1 {
		t.Errorf("near-expiry credentials not renewed: err=%v reused=%v", err, renewed != nil && renewed.Reused)
	}
}

func TestJoinWrongSecret(t *testing.T) {
	e := newJoinEnv(t)
	bad := pki.FormatToken(pki.CAHash(e.bundle.CAPEM()), "wrong-secret")
	_, err := Join(ctxT(t), e.srv.URL, bad, "node-1", t.TempDir(), zaptest.NewLogger(t))
	if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "secret is wrong") {
		t.Fatalf("want a clear 401 rejection, got %v", err)
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("error repeats the secret: %v", err)
	}
}

func TestJoinWrongCAHashSendsNoSecret(t *testing.T) {
	e := newJoinEnv(t)
	other := pki.FormatToken(strings.Repeat("ab", 32), "s3cret-s3cret")
	_, err := Join(ctxT(t), e.srv.URL, other, "node-1", t.TempDir(), zaptest.NewLogger(t))
	if !errors.Is(err, ErrCAMismatch) || !strings.Contains(err.Error(), "the server's CA does not match the token") {
		t.Fatalf("want a CA mismatch, got %v", err)
	}
	if n := e.certReqs.Load(); n != 0 {
		t.Errorf("the join handler saw %d certificate requests, want none", n)
	}
}

func TestJoinBareToken(t *testing.T) {
	e := newJoinEnv(t)
	_, err := Join(ctxT(t), e.srv.URL, "s3cret-s3cret", "node-1", t.TempDir(), zaptest.NewLogger(t))
	if !errors.Is(err, ErrUnpinnedToken) {
		t.Fatalf("bare token without CA file: want ErrUnpinnedToken, got %v", err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, e.bundle.CAPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	creds, err := JoinWithOptions(ctxT(t), Options{ServerURL: e.srv.URL, Token: "s3cret-s3cret", NodeName: "node-2",
		Dir: t.TempDir(), CAFile: caFile, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatalf("bare token with CA file: %v", err)
	}
	if got := whoami(t, e, creds.KubeconfigPath); !strings.HasPrefix(got, "system:node:node-2 ") {
		t.Errorf("authenticates as %q", got)
	}
}

// whoami calls the test server with the kubeconfig's TLS settings.
func whoami(t *testing.T, e *joinEnv, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(cfg.Host + "/whoami")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("whoami: %s: %s", resp.Status, b)
	}
	return string(b)
}
