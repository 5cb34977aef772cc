package pki

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"slices"
	"testing"
	"time"
)

func TestSignValidity(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ca := now.Add(365 * 24 * time.Hour)
	for _, c := range []struct {
		name      string
		ttl       time.Duration
		caEnd     time.Time
		wantAfter time.Time
		wantErr   bool
	}{
		{"short lived lasts ttl", time.Hour, ca, now.Add(time.Hour), false},
		{"long lived ends backdated", 24 * time.Hour, ca, now.Add(24*time.Hour - 5*time.Minute), false},
		{"eight hours is long lived", 8 * time.Hour, ca, now.Add(8*time.Hour - 5*time.Minute), false},
		{"capped at the CA", 2 * 365 * 24 * time.Hour, ca, ca, false},
		{"CA expired", time.Hour, now, time.Time{}, true},
		{"no lifetime", 0, ca, time.Time{}, true},
	} {
		nb, na, err := signValidity(now, c.ttl, c.caEnd)
		if (err != nil) != c.wantErr || (err == nil && (!na.Equal(c.wantAfter) || !nb.Equal(now.Add(-5*time.Minute)))) {
			t.Errorf("%s: %v..%v, %v", c.name, nb, na, err)
		}
	}
}

func TestSignRequest(t *testing.T) {
	b := mustLoad(t, t.TempDir(), testOpts(t))
	k, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "jane", Organization: []string{"devs"}}, DNSNames: []string{"jane.example"},
		IPAddresses: []net.IP{net.ParseIP("192.0.2.1")}}, k)
	if err != nil {
		t.Fatal(err)
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := b.SignRequest(req, time.Hour, x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCertPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: b.CAPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("does not chain to the CA: %v", err)
	}
	if c.IsCA || c.Subject.CommonName != "jane" || !slices.Equal(c.Subject.Organization, []string{"devs"}) ||
		!slices.Equal(c.DNSNames, []string{"jane.example"}) || len(c.IPAddresses) != 1 ||
		c.KeyUsage != x509.KeyUsageDigitalSignature || !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
		t.Fatalf("certificate: %+v", c)
	}
	if life := c.NotAfter.Sub(c.NotBefore); life != time.Hour+5*time.Minute {
		t.Errorf("lifetime %v, want 1h5m (backdated five minutes)", life)
	}
	req.Signature[0] ^= 0xff
	if _, err := b.SignRequest(req, time.Hour, 0, nil); !errors.Is(err, ErrInvalidPEM) {
		t.Errorf("a tampered request: %v", err)
	}
}
