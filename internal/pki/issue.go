package pki

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrInvalidSubject means a requested certificate subject is unusable.
var ErrInvalidSubject = errors.New("invalid certificate subject")

// ErrCAMismatch means a different cluster CA is already installed.
var ErrCAMismatch = errors.New("a different cluster CA is already installed")

func clientSpec(cn string, orgs []string) (leafSpec, error) {
	if strings.TrimSpace(cn) == "" {
		return leafSpec{}, fmt.Errorf("%w: empty common name", ErrInvalidSubject)
	}
	for _, o := range orgs {
		if strings.TrimSpace(o) == "" {
			return leafSpec{}, fmt.Errorf("%w: empty organization for %q", ErrInvalidSubject, cn)
		}
	}
	return leafSpec{commonName: cn, orgs: orgs, extUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, nil
}

// IssueClientCert creates a key and a one-year client certificate with
// CN=cn and O=orgs (user name and groups for the API server), for example
// system:node:<name> / system:nodes.
func (b *Bundle) IssueClientCert(cn string, orgs []string) (certPEM, keyPEM []byte, err error) {
	spec, err := clientSpec(cn, orgs)
	if err != nil {
		return nil, nil, err
	}
	kp, err := b.ca.issue(b.now(), spec, nil)
	if err != nil {
		return nil, nil, err
	}
	return kp.certPEM, kp.keyPEM, nil
}

// SignClientCSR signs a PEM "CERTIFICATE REQUEST" as a client certificate
// for CN=cn, O=orgs. The subject and extensions of the request are ignored:
// only its public key (proved by its signature) is used, so a requester
// cannot ask for more than the caller grants.
func (b *Bundle) SignClientCSR(csrPEM []byte, cn string, orgs []string) ([]byte, error) {
	spec, err := clientSpec(cn, orgs)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(csrPEM)
	if blk == nil || blk.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("%w: no CERTIFICATE REQUEST block", ErrInvalidPEM)
	}
	csr, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: parse certificate request: %w", ErrInvalidPEM, err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("%w: certificate request signature: %w", ErrInvalidPEM, err)
	}
	kp, err := b.ca.issue(b.now(), spec, csr.PublicKey)
	if err != nil {
		return nil, err
	}
	return kp.certPEM, nil
}

// InstallCA writes a cluster CA received from an existing server (HA join)
// into dir before LoadOrCreate runs. Installing the CA that is already
// there is a no-op; a different one gives ErrCAMismatch.
func InstallCA(dir string, certPEM, keyPEM []byte) error {
	kp, err := parseKeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("install cluster CA: %w", err)
	}
	if !kp.cert.IsCA {
		return fmt.Errorf("install cluster CA: certificate is not a CA: %w", ErrInvalidPEM)
	}
	if err := ensurePrivateDir(dir); err != nil {
		return err
	}
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	old, err := readOptional(certPath)
	if err != nil {
		return err
	}
	if old != nil {
		oldCert, err := parseCertPEM(old)
		if err == nil && oldCert.Equal(kp.cert) {
			return nil
		}
		return fmt.Errorf("install cluster CA into %s: %w", dir, ErrCAMismatch)
	}
	return writePair(certPath, keyPath, kp)
}
