package join

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	serverjoin "github.com/orch/orch/server/join"
)

func ips(s ...string) []net.IP {
	out := make([]net.IP, len(s))
	for i, v := range s {
		out[i] = net.ParseIP(v)
	}
	return out
}

func joinIPs(t *testing.T, e *joinEnv, dir string, nodeIPs []net.IP) *Credentials {
	t.Helper()
	creds, err := JoinWithOptions(ctxT(t), Options{ServerURL: e.srv.URL, Token: e.token, NodeName: "node-1", Dir: dir,
		Logger: zaptest.NewLogger(t), NodeIPs: nodeIPs})
	if err != nil {
		t.Fatalf("JoinWithOptions(NodeIPs=%v): %v", nodeIPs, err)
	}
	return creds
}

// serveOnce serves the node's serving certificate on loopback and dials it
// by IP the way the API server dials a node's InternalIP.
func serveOnce(t *testing.T, creds *Credentials, caPEM []byte) error {
	t.Helper()
	cert, err := creds.ServingTLS()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c, err := ln.Accept(); err == nil {
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	defer func() { _ = ln.Close(); <-done }()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	return c.Close()
}

func TestJoinServingCertificate(t *testing.T) {
	e := newJoinEnv(t)
	dir := filepath.Join(t.TempDir(), "agent")
	creds := joinIPs(t, e, dir, ips("127.0.0.1", "2001:db8::5"))
	leaf, err := creds.ServingTLS()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "2001:db8::5", "node-1"} {
		_, err := leaf.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: e.bundle.CAPool(),
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{Roots: e.bundle.CAPool(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("serving certificate verifies for client auth")
	}
	if err := serveOnce(t, creds, e.bundle.CAPEM()); err != nil {
		t.Fatalf("TLS to the node by IP: %v", err)
	}
	if creds.ServingCertPath != filepath.Join(dir, ServingCertFile) || creds.ServingKeyPath != filepath.Join(dir, ServingKeyFile) {
		t.Errorf("serving paths %s %s", creds.ServingCertPath, creds.ServingKeyPath)
	}
	onDisk, err := os.ReadFile(creds.ServingCertPath)
	if err != nil || string(onDisk) != string(creds.ServingCertPEM) {
		t.Fatalf("stored serving certificate differs: %v", err)
	}

	// A restart with the same IPs (any order, duplicates) reuses everything.
	before := e.certReqs.Load()
	again := joinIPs(t, e, dir, ips("2001:db8::5", "127.0.0.1", "127.0.0.1"))
	if !again.Reused || e.certReqs.Load() != before || string(again.ServingCertPEM) != string(creds.ServingCertPEM) ||
		string(again.ServingKeyPEM) != string(creds.ServingKeyPEM) {
		t.Fatalf("restart with the same IPs did not reuse the serving certificate (reused=%v)", again.Reused)
	}

	// Other IPs: a new join and a serving certificate for them.
	moved := joinIPs(t, e, dir, ips("127.0.0.2"))
	if moved.Reused || e.certReqs.Load() != before+1 || string(moved.ServingCertPEM) == string(creds.ServingCertPEM) {
		t.Fatalf("IP change did not issue a new serving certificate (reused=%v)", moved.Reused)
	}
	if got := ipStrings(moved.NodeIPs); len(got) != 1 || got[0] != "127.0.0.2" {
		t.Errorf("NodeIPs %v, want [127.0.0.2]", got)
	}
	if err := serveOnce(t, moved, e.bundle.CAPEM()); err == nil {
		t.Error("a certificate for 127.0.0.2 was accepted when dialling 127.0.0.1")
	}

	// A missing serving key also makes the agent join again.
	if err := os.Remove(filepath.Join(dir, ServingKeyFile)); err != nil {
		t.Fatal(err)
	}
	if fresh := joinIPs(t, e, dir, ips("127.0.0.2")); fresh.Reused || e.certReqs.Load() != before+2 {
		t.Fatalf("missing serving key did not trigger a join (reused=%v)", fresh.Reused)
	}
}

func TestJoinRejectsBadNodeIPs(t *testing.T) {
	e := newJoinEnv(t)
	for _, bad := range [][]net.IP{ips("0.0.0.0"), ips("::"), ips("224.0.0.1"), {net.IP{1, 2, 3}}} {
		_, err := JoinWithOptions(ctxT(t), Options{ServerURL: e.srv.URL, Token: e.token, NodeName: "node-1",
			Dir: t.TempDir(), Logger: zaptest.NewLogger(t), NodeIPs: bad})
		if !errors.Is(err, ErrInvalidNodeIP) {
			t.Errorf("NodeIPs %v: want ErrInvalidNodeIP, got %v", bad, err)
		}
	}
	if n := e.certReqs.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

// TestJoinOldServer: a server that ignores servingCSRPEM gives a clear
// error instead of a node without a serving certificate.
func TestJoinOldServer(t *testing.T) {
	e := newJoinEnv(t)
	old := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == serverjoin.CACertsPath {
			_, _ = w.Write(e.bundle.CAPEM())
			return
		}
		var req serverjoin.NodeCertificateRequest
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		cert, err := e.bundle.SignClientCSR([]byte(req.CSRPEM), serverjoin.NodeUserPrefix+req.NodeName, []string{serverjoin.NodesGroup})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"certificatePEM": string(cert), "caPEM": string(e.bundle.CAPEM())})
	}))
	old.TLS = e.bundle.ServerTLSConfig()
	old.StartTLS()
	old.TLS.Certificates = nil // serve the bundle's certificate (GetCertificate), not httptest's
	defer old.Close()
	_, err := Join(ctxT(t), old.URL, e.token, "node-1", t.TempDir(), zaptest.NewLogger(t))
	if !errors.Is(err, ErrNoServingCertificate) {
		t.Fatalf("want ErrNoServingCertificate, got %v", err)
	}
	if _, err := (&Credentials{NodeName: "x"}).ServingTLS(); !errors.Is(err, ErrNoServingCertificate) {
		t.Errorf("ServingTLS without a certificate: %v", err)
	}
}
