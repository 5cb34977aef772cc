package datastore

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// testPKI is a throwaway CA with one loopback certificate used as both
// server and client identity.
type testPKI struct {
	server, client *tls.Config
}

var (
	pkiOnce sync.Once
	pki     testPKI
	pkiErr  error
)

// NewTestTLS returns mutual-TLS configs for loopback raft transports.
func NewTestTLS(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	pkiOnce.Do(func() { pki, pkiErr = newTestPKI() })
	if pkiErr != nil {
		t.Fatalf("test PKI: %v", pkiErr)
	}
	return pki.server, pki.client
}

func newTestPKI() (testPKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return testPKI{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "orch-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return testPKI{}, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return testPKI{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "orch-test-server"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return testPKI{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return testPKI{
		server: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13},
		client: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS13},
	}, nil
}

// NewTestConfig is a loopback single-node config in dir.
func NewTestConfig(t testing.TB, dir string) Config {
	server, client := NewTestTLS(t)
	var log *zap.Logger = zap.NewNop()
	if tt, ok := t.(*testing.T); ok {
		level := zap.WarnLevel
		if os.Getenv("ORCH_TEST_DEBUG") != "" {
			level = zap.DebugLevel
		}
		log = zaptest.NewLogger(tt, zaptest.Level(level))
	}
	return Config{
		Dir: dir, NodeID: "node1", BindAddr: "127.0.0.1:0",
		ServerTLS: server, ClientTLS: client, Bootstrap: true, Logger: log,
	}
}

// OpenTest opens cfg, waits for leadership and closes the store at cleanup.
func OpenTest(t testing.TB, cfg Config) *RaftStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.WaitLeader(ctx); err != nil {
		t.Fatalf("WaitLeader: %v", err)
	}
	return s
}

// NewTestPKIConfigs returns fresh mutual-TLS configs (for child processes
// without a testing.T).
func NewTestPKIConfigs() (server, client *tls.Config, err error) {
	p, err := newTestPKI()
	return p.server, p.client, err
}
