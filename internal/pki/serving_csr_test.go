package pki

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"net"
	"slices"
	"testing"
)

func testServingCSR(t *testing.T) ([]byte, crypto.PublicKey) {
	t.Helper()
	k, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}},
		DNSNames:    []string{"evil.example"},
		IPAddresses: []net.IP{net.ParseIP("10.0.0.1")},
	}, k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), k.Public()
}

func TestSignServingCSR(t *testing.T) {
	b := mustLoad(t, t.TempDir(), testOpts(t))
	csrPEM, pub := testServingCSR(t)
	ips := []net.IP{net.ParseIP("192.0.2.21"), net.ParseIP("2001:db8::21")}
	certPEM, err := b.SignServingCSR(csrPEM, "system:node:n1", []string{"system:nodes"}, []string{"n1"}, ips)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCertPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject.CommonName != "system:node:n1" || !slices.Equal(c.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("subject %v, want the caller's", c.Subject)
	}
	if !slices.Equal(c.DNSNames, []string{"n1"}) || !slices.Equal(ipStrings(c.IPAddresses), []string{"192.0.2.21", "2001:db8::21"}) {
		t.Errorf("SANs %v %v, want exactly the caller's", c.DNSNames, c.IPAddresses)
	}
	if !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("ext key usage %v, want ServerAuth only", c.ExtKeyUsage)
	}
	if !pub.(interface{ Equal(crypto.PublicKey) bool }).Equal(c.PublicKey) {
		t.Error("certificate is not for the CSR's key")
	}
	if got, want := c.NotAfter.Sub(c.NotBefore), b.leaves.get(LeafServing).cert.NotAfter.Sub(b.leaves.get(LeafServing).cert.NotBefore); got != want {
		t.Errorf("validity %v, want %v like the other leaf certificates", got, want)
	}
	verify := func(name string, usage x509.ExtKeyUsage) error {
		_, err := c.Verify(x509.VerifyOptions{DNSName: name, Roots: b.CAPool(), KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	for _, name := range []string{"192.0.2.21", "2001:db8::21", "n1"} {
		if err := verify(name, x509.ExtKeyUsageServerAuth); err != nil {
			t.Errorf("server auth for %s: %v", name, err)
		}
	}
	for _, name := range []string{"10.0.0.1", "evil.example", "192.0.2.22"} {
		if verify(name, x509.ExtKeyUsageServerAuth) == nil {
			t.Errorf("certificate is valid for %s, which the caller did not grant", name)
		}
	}
	if verify("n1", x509.ExtKeyUsageClientAuth) == nil {
		t.Error("serving certificate verifies for client auth")
	}
}

func TestSignServingCSRRejects(t *testing.T) {
	b := mustLoad(t, t.TempDir(), testOpts(t))
	csrPEM, _ := testServingCSR(t)
	ip := []net.IP{net.ParseIP("192.0.2.1")}
	tests := []struct {
		name  string
		csr   []byte
		cn    string
		orgs  []string
		dns   []string
		ips   []net.IP
		isErr error
	}{
		{"junk csr", []byte("junk"), "system:node:n1", nil, []string{"n1"}, ip, ErrInvalidPEM},
		{"empty cn", csrPEM, " ", nil, []string{"n1"}, ip, ErrInvalidSubject},
		{"empty org", csrPEM, "system:node:n1", []string{""}, []string{"n1"}, ip, ErrInvalidSubject},
		{"no SANs", csrPEM, "system:node:n1", nil, nil, nil, ErrInvalidSubject},
		{"empty DNS name", csrPEM, "system:node:n1", nil, []string{""}, ip, ErrInvalidSubject},
		{"malformed IP", csrPEM, "system:node:n1", nil, []string{"n1"}, []net.IP{{1, 2, 3}}, ErrInvalidSubject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := b.SignServingCSR(tt.csr, tt.cn, tt.orgs, tt.dns, tt.ips); !errors.Is(err, tt.isErr) {
				t.Fatalf("got %v, want %v", err, tt.isErr)
			}
		})
	}
}
