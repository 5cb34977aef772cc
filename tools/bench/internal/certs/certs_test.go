package certs

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	b, err := Generate(dir, "https://127.0.0.1:6443")
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	caPEM, err := os.ReadFile(b.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA file holds no certificate")
	}
	pair, err := tls.LoadX509KeyPair(b.ServerCert, b.ServerKey)
	if err != nil {
		t.Fatalf("server key pair: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"}); err != nil {
		t.Fatalf("server cert does not verify for 127.0.0.1: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", b.Kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	client, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		t.Fatalf("client key pair: %v", err)
	}
	cl, err := x509.ParseCertificate(client.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Subject.Organization) != 1 || cl.Subject.Organization[0] != "system:masters" {
		t.Fatalf("client cert organization = %v, want [system:masters]", cl.Subject.Organization)
	}
	opts := x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := cl.Verify(opts); err != nil {
		t.Fatalf("client cert does not verify: %v", err)
	}
	for _, f := range []string{b.SAKey, b.ServerKey, b.Kubeconfig} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", f, st.Mode().Perm())
		}
	}
}
