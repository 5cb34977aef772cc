package pki

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"path/filepath"
	"testing"
)

func TestSignClientCSRUsesCallerSubject(t *testing.T) {
	b := mustLoad(t, t.TempDir(), testOpts(t))
	k, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}},
	}, k)
	if err != nil {
		t.Fatal(err)
	}
	csrPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	certPEM, err := b.SignClientCSR(csrPEM, "system:node:n1", []string{"system:nodes"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCertPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject.CommonName != "system:node:n1" || len(c.Subject.Organization) != 1 || c.Subject.Organization[0] != "system:nodes" {
		t.Fatalf("subject %v", c.Subject)
	}
	if !k.PublicKey.Equal(c.PublicKey) {
		t.Fatal("certificate is not for the CSR's key")
	}
	if _, err := b.SignClientCSR([]byte("junk"), "x", nil); !errors.Is(err, ErrInvalidPEM) {
		t.Fatalf("junk CSR: %v", err)
	}
}

func TestInstallCA(t *testing.T) {
	src := mustLoad(t, t.TempDir(), testOpts(t))
	caKey, err := readOptional(filepath.Join(src.Dir(), CAKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := InstallCA(dst, src.CAPEM(), caKey); err != nil {
		t.Fatal(err)
	}
	if err := InstallCA(dst, src.CAPEM(), caKey); err != nil {
		t.Fatalf("re-installing the same CA: %v", err)
	}
	joined := mustLoad(t, dst, testOpts(t))
	if string(joined.CAPEM()) != string(src.CAPEM()) {
		t.Fatal("joined server made its own CA")
	}
	other := mustLoad(t, t.TempDir(), testOpts(t))
	otherKey, _ := readOptional(filepath.Join(other.Dir(), CAKeyFile))
	if err := InstallCA(dst, other.CAPEM(), otherKey); !errors.Is(err, ErrCAMismatch) {
		t.Fatalf("different CA: %v", err)
	}
	if err := InstallCA(t.TempDir(), src.CAPEM(), otherKey); !errors.Is(err, ErrInvalidPEM) {
		t.Fatalf("mismatched key: %v", err)
	}
}
