package join

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/internal/pki"
)

func TestDueForRenewal(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, tc := range []struct {
		client, serving time.Duration
		due             bool
	}{{300 * day, 300 * day, false}, {91 * day, 91 * day, false}, {89 * day, 300 * day, true}, {300 * day, 89 * day, true}, {-day, 300 * day, true}} {
		c := &Credentials{NotAfter: now.Add(tc.client), ServingNotAfter: now.Add(tc.serving)}
		if got := dueForRenewal(c, now, RenewWindow); got != tc.due {
			t.Errorf("client %v serving %v left: due = %v, want %v", tc.client, tc.serving, got, tc.due)
		}
	}
}

// TestRenewWhileRunning: with the node's clock 300 days on, the renewal
// loop gets new client and serving certificates from the server using the
// node's certificate and no token, stores them, and a listener serving
// through ServingCertificateFrom presents the new serving certificate
// without a restart.
func TestRenewWhileRunning(t *testing.T) {
	e := newJoinEnv(t)
	dir := filepath.Join(t.TempDir(), "agent")
	creds, err := JoinWithOptions(ctxT(t), Options{ServerURL: e.srv.URL, Token: e.token, NodeName: "node-1", Dir: dir,
		Logger: zaptest.NewLogger(t), NodeIPs: []net.IP{net.ParseIP("127.0.0.1")}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: ServingCertificateFrom(creds.ServingCertPath, creds.ServingKeyPath)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	served := func() string {
		t.Helper()
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: e.bundle.CAPool(), ServerName: "node-1"})
		if err != nil {
			t.Fatalf("dial the node's listener: %v", err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	first := served()
	later := time.Now().Add(300 * 24 * time.Hour)
	// No token in the options: renewal must authenticate with the certificate.
	loop := &renewLoop{o: Options{ServerURL: e.srv.URL, NodeName: "node-1", Dir: dir, Logger: zaptest.NewLogger(t),
		Now: func() time.Time { return later }}, creds: creds, every: 10 * time.Millisecond, window: RenewWindow}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); loop.run(ctx) }()
	stop := func() { cancel(); wg.Wait() }
	defer stop()
	deadline := time.Now().Add(20 * time.Second)
	for served() == first {
		if time.Now().After(deadline) {
			t.Fatal("the listener still serves the old serving certificate")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop() // the loop renews every 10ms with this clock; let the files settle
	reloaded, err := JoinWithOptions(ctxT(t), Options{ServerURL: e.srv.URL, Token: e.token, NodeName: "node-1", Dir: dir,
		Logger: zaptest.NewLogger(t), NodeIPs: []net.IP{net.ParseIP("127.0.0.1")}})
	if err != nil || !reloaded.Reused || string(reloaded.CertPEM) == string(creds.CertPEM) {
		t.Fatalf("the renewed credentials are not what a restart loads (err %v, reused %v)", err, reloaded != nil && reloaded.Reused)
	}
	if got := whoami(t, e, reloaded.KubeconfigPath); got != "system:node:node-1 system:nodes,system:authenticated" {
		t.Errorf("renewed certificate authenticates as %q", got)
	}
}

// TestRenewAtStartWithoutToken: credentials close to expiry at start are
// renewed with the node certificate, so a token that no longer works (an
// expired bootstrap token) does not keep the agent from starting.
func TestRenewAtStartWithoutToken(t *testing.T) {
	e := newJoinEnv(t)
	dir := filepath.Join(t.TempDir(), "agent")
	creds, err := Join(ctxT(t), e.srv.URL, e.token, "node-1", dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	stale := pki.FormatToken(pki.CAHash(e.bundle.CAPEM()), "no-longer-valid")
	renewed, err := JoinWithOptions(ctxT(t), Options{ServerURL: e.srv.URL, Token: stale, NodeName: "node-1", Dir: dir,
		Logger: zaptest.NewLogger(t), RenewBefore: 400 * 24 * time.Hour})
	if err != nil {
		t.Fatalf("renewal at start with a stale token: %v", err)
	}
	if renewed.Reused || string(renewed.CertPEM) == string(creds.CertPEM) {
		t.Fatal("the credentials were not renewed")
	}
	if got := whoami(t, e, renewed.KubeconfigPath); got != "system:node:node-1 system:nodes,system:authenticated" {
		t.Errorf("renewed certificate authenticates as %q", got)
	}
	if _, err := JoinWithOptions(ctxT(t), Options{ServerURL: e.srv.URL, Token: stale, NodeName: "node-2", Dir: dir,
		Logger: zaptest.NewLogger(t)}); !errors.Is(err, ErrRejected) {
		t.Fatalf("another node name with node-1's certificate and a stale token: %v, want a refusal", err)
	}
}
