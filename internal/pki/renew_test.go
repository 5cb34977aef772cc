package pki

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestDueForRenewal(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, tc := range []struct {
		left time.Duration
		due  bool
	}{{365 * day, false}, {91 * day, false}, {90*day + time.Second, false}, {90*day - time.Second, true}, {day, true}, {-day, true}} {
		if got := dueForRenewal(now.Add(tc.left), now); got != tc.due {
			t.Errorf("%v left: due = %v, want %v", tc.left, got, tc.due)
		}
	}
}

// TestRenewDueWithClock: with the bundle's clock 100 days on nothing is
// renewed; 280 days on (85 left) every leaf is, on disk too, and a bundle
// loaded from the directory afterwards keeps the renewed files.
func TestRenewDueWithClock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	t0 := time.Now()
	var now atomic.Pointer[time.Time]
	now.Store(&t0)
	o := testOpts(t)
	o.Now = func() time.Time { return *now.Load() }
	b := mustLoad(t, dir, o)
	serial := func(name string) string { return b.leaves.get(name).cert.SerialNumber.String() }
	before := map[string]string{}
	all := []string{LeafServing, LeafPeer, LeafAdmin, FrontProxyClientName}
	for _, n := range all {
		before[n] = serial(n)
	}
	at := func(d time.Duration) { t1 := t0.Add(d); now.Store(&t1) }
	at(100 * 24 * time.Hour)
	if names, err := b.RenewDue(); err != nil || len(names) != 0 {
		t.Fatalf("100 days on: renewed %v, %v", names, err)
	}
	at(280 * 24 * time.Hour)
	names, err := b.RenewDue()
	if err != nil || !slices.Equal(names, all) {
		t.Fatalf("280 days on: renewed %v, %v; want %v", names, err, all)
	}
	for _, n := range all {
		if serial(n) == before[n] {
			t.Errorf("%s: same serial after renewal", n)
		}
		if left := b.leaves.get(n).cert.NotAfter.Sub(*now.Load()); left < 364*24*time.Hour {
			t.Errorf("%s: renewed certificate has only %v left", n, left)
		}
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, "serving.crt"))
	if err != nil || string(onDisk) != string(b.leaves.get(LeafServing).certPEM) {
		t.Fatalf("serving.crt on disk is not the renewed certificate (%v)", err)
	}
	again := mustLoad(t, dir, o)
	if again.leaves.get(LeafAdmin).cert.SerialNumber.Cmp(b.leaves.get(LeafAdmin).cert.SerialNumber) != 0 {
		t.Error("the next start issued the admin certificate again instead of loading the renewed one")
	}
	if string(b.AdminCertPEM()) != string(b.leaves.get(LeafAdmin).certPEM) {
		t.Error("AdminCertPEM is not the renewed certificate")
	}
}

// TestRenewWhileServing: a server whose certificates are issued for two
// hours (the test hook; always within 90 days) keeps serving on one
// listener while KeepRenewed replaces its serving certificate, and new
// connections see the new one; the peer TLS configurations pick the new
// peer certificate up too.
func TestRenewWhileServing(t *testing.T) {
	o := testOpts(t)
	o.LeafValidity = 2 * time.Hour
	b := mustLoad(t, filepath.Join(t.TempDir(), "tls"), o)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.TLS = b.ServerTLSConfig()
	srv.StartTLS()
	defer srv.Close()
	servedSerial := func() string {
		t.Helper()
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: b.CAPool(), ServerName: "localhost"},
			DisableKeepAlives: true}, Timeout: 10 * time.Second}
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatalf("GET while renewing: %v", err)
		}
		defer resp.Body.Close()
		if body, _ := io.ReadAll(resp.Body); string(body) != "ok" {
			t.Fatalf("body %q", body)
		}
		return resp.TLS.PeerCertificates[0].SerialNumber.String()
	}
	first := servedSerial()
	peerFirst := peerHandshakeSerial(t, b)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	renewed := make(chan []string, 16)
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.KeepRenewed(ctx, 10*time.Millisecond, func(n []string) {
			select {
			case renewed <- n:
			default: // the test reads only the first ones
			}
		})
	}()
	defer func() { cancel(); wg.Wait() }()
	select {
	case names := <-renewed:
		if !slices.Contains(names, LeafServing) {
			t.Fatalf("renewed %v, want the serving certificate among them", names)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("KeepRenewed renewed nothing")
	}
	if second := servedSerial(); second == first {
		t.Fatal("the listener still serves the old certificate after renewal")
	}
	if peerHandshakeSerial(t, b) == peerFirst {
		t.Fatal("the peer TLS configuration still presents the old certificate")
	}
}

// peerHandshakeSerial handshakes the bundle's peer server and client
// configurations and returns the serial the client saw.
func peerHandshakeSerial(t *testing.T, b *Bundle) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", b.PeerServerTLS())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(), b.PeerClientTLS())
	if err != nil {
		t.Fatalf("peer handshake: %v", err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}
