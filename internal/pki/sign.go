package pki

import (
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// The CSR signer's backdating, as kube-controller-manager's: certificates
// start five minutes early (clock skew); those of at least shortLived
// also end five minutes early, so they last ttl.
const (
	signBackdate   = 5 * time.Minute
	signShortLived = 8 * time.Hour
)

// ErrCAExpired means the cluster CA can sign nothing more.
var ErrCAExpired = errors.New("the cluster CA has expired")

// SignRequest signs a verified certificate request with the cluster CA as
// kube-controller-manager's CSR signer does (PermissiveSigningPolicy):
// the request's subject and subject alternative names, keyUsage and
// extUsage as the CertificateSigningRequest asked, never a CA, none of the
// request's other extensions, valid from five minutes ago for ttl and
// never past the CA. It returns the PEM certificate.
func (b *Bundle) SignRequest(csr *x509.CertificateRequest, ttl time.Duration, keyUsage x509.KeyUsage, extUsage []x509.ExtKeyUsage) ([]byte, error) {
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("%w: certificate request signature: %w", ErrInvalidPEM, err)
	}
	notBefore, notAfter, err := signValidity(b.now(), ttl, b.ca.cert.NotAfter)
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: csr.Subject, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: keyUsage, ExtKeyUsage: extUsage, BasicConstraintsValid: true, IsCA: false,
		DNSNames: csr.DNSNames, IPAddresses: csr.IPAddresses, EmailAddresses: csr.EmailAddresses, URIs: csr.URIs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, b.ca.cert, csr.PublicKey, b.ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %q: %w", csr.Subject.CommonName, err)
	}
	return encodeCert(der), nil
}

// signValidity is the validity of a certificate of ttl signed at now by a
// CA valid until caNotAfter (upstream's PermissiveSigningPolicy.apply).
func signValidity(now time.Time, ttl time.Duration, caNotAfter time.Time) (time.Time, time.Time, error) {
	if ttl <= 0 {
		return time.Time{}, time.Time{}, fmt.Errorf("certificate lifetime %v is not positive", ttl)
	}
	if !now.Before(caNotAfter) {
		return time.Time{}, time.Time{}, fmt.Errorf("%w: NotAfter=%v", ErrCAExpired, caNotAfter)
	}
	notBefore, notAfter := now.Add(-signBackdate), now.Add(ttl)
	if ttl >= signShortLived {
		notAfter = notAfter.Add(-signBackdate)
	}
	if notAfter.After(caNotAfter) {
		notAfter = caNotAfter
	}
	return notBefore, notAfter, nil
}
