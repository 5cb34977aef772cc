package pki

import (
	"crypto/x509"
	"path/filepath"
	"testing"
)

func TestFrontProxyIdentity(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	b1 := mustLoad(t, dir, testOpts(t))
	b2 := mustLoad(t, dir, testOpts(t))
	if string(b1.FrontProxyCAPEM()) != string(b2.FrontProxyCAPEM()) {
		t.Fatal("front-proxy CA changed across runs")
	}
	if string(b1.FrontProxyCAPEM()) == string(b1.CAPEM()) {
		t.Fatal("front-proxy CA must differ from the cluster CA")
	}
	cert, err := b2.FrontProxyClientCert()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.Subject.CommonName != FrontProxyClientName {
		t.Fatalf("CN %q", leaf.Subject.CommonName)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b2.FrontProxyCAPEM())
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client cert not signed by the front-proxy CA: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: b2.CAPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Fatal("front-proxy client must not be trusted by the cluster CA")
	}
}
