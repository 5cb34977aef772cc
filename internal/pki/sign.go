package pki

import (
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"time"
)

// SignRequest signs a verified certificate request with the cluster CA
// as kube-controller-manager's CSR signer does: the request's subject and
// subject alternative names, keyUsage and extUsage as the
// CertificateSigningRequest asked, valid from five minutes ago for ttl
// (never past the CA). It returns the PEM certificate.
func (b *Bundle) SignRequest(csr *x509.CertificateRequest, ttl time.Duration, keyUsage x509.KeyUsage, extUsage []x509.ExtKeyUsage) ([]byte, error) {
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("%w: certificate request signature: %w", ErrInvalidPEM, err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := b.now()
	notAfter := now.Add(ttl)
	if notAfter.After(b.ca.cert.NotAfter) {
		notAfter = b.ca.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: csr.Subject,
		NotBefore: now.Add(-5 * time.Minute), NotAfter: notAfter,
		KeyUsage: keyUsage, ExtKeyUsage: extUsage, BasicConstraintsValid: true,
		DNSNames: csr.DNSNames, IPAddresses: csr.IPAddresses, EmailAddresses: csr.EmailAddresses, URIs: csr.URIs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, b.ca.cert, csr.PublicKey, b.ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %q: %w", csr.Subject.CommonName, err)
	}
	return encodeCert(der), nil
}
