package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

const (
	caValidity     = 10 * 365 * 24 * time.Hour
	leafValidity   = 365 * 24 * time.Hour
	renewBefore    = 90 * 24 * time.Hour
	clockSkewGrace = time.Hour

	pemTypeCert  = "CERTIFICATE"
	pemTypeECKey = "EC PRIVATE KEY"
)

// ErrInvalidPEM is returned when PEM data does not hold what was expected.
var ErrInvalidPEM = errors.New("invalid PEM data")

// keyPair is a parsed certificate with its private key and their PEM forms.
type keyPair struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

func newKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ECDSA P-256 key: %w", err)
	}
	return k, nil
}

func newSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generate serial number: %w", err)
	}
	return s.Add(s, big.NewInt(1)), nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: pemTypeCert, Bytes: der})
}

func encodeKey(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("marshal EC key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemTypeECKey, Bytes: der}), nil
}

// parseCertPEM parses the first CERTIFICATE block of b.
func parseCertPEM(b []byte) (*x509.Certificate, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, fmt.Errorf("%w: no CERTIFICATE block", ErrInvalidPEM)
		}
		if blk.Type == pemTypeCert {
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: parse certificate: %w", ErrInvalidPEM, err)
			}
			return c, nil
		}
	}
}

// parseKeyPEM parses an EC (SEC 1) or PKCS#8 private key.
func parseKeyPEM(b []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%w: no private key block", ErrInvalidPEM)
	}
	if k, err := x509.ParseECPrivateKey(blk.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: parse private key: %w", ErrInvalidPEM, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: private key type %T cannot sign", ErrInvalidPEM, k)
	}
	return s, nil
}

// parseKeyPair parses and cross-checks a certificate and its key.
func parseKeyPair(certPEM, keyPEM []byte) (*keyPair, error) {
	c, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, err
	}
	k, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	pub, ok := k.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(c.PublicKey) {
		return nil, fmt.Errorf("%w: private key does not match certificate", ErrInvalidPEM)
	}
	return &keyPair{cert: c, key: k, certPEM: certPEM, keyPEM: keyPEM}, nil
}

// newCA creates a self-signed CA certificate valid for ten years.
func newCA(now time.Time) (*keyPair, error) {
	k, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: fmt.Sprintf("orch-ca@%d", now.Unix())},
		NotBefore:             now.Add(-clockSkewGrace),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, k.Public(), k)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	return finishKeyPair(der, k)
}

// leafSpec describes a certificate to issue from the CA.
type leafSpec struct {
	commonName string
	orgs       []string
	dnsNames   []string
	ips        []net.IP
	extUsage   []x509.ExtKeyUsage
	// validity is the lifetime; 0 = leafValidity (a seam for tests).
	validity time.Duration
}

// issue signs a new leaf certificate for pub (a fresh key when pub is nil).
func (ca *keyPair) issue(now time.Time, spec leafSpec, pub crypto.PublicKey) (*keyPair, error) {
	var k *ecdsa.PrivateKey
	if pub == nil {
		var err error
		if k, err = newKey(); err != nil {
			return nil, err
		}
		pub = k.Public()
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	validity := spec.validity
	if validity <= 0 {
		validity = leafValidity
	}
	notAfter := now.Add(validity)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: spec.commonName, Organization: spec.orgs},
		NotBefore:             now.Add(-clockSkewGrace),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           spec.extUsage,
		BasicConstraintsValid: true,
		DNSNames:              spec.dnsNames,
		IPAddresses:           spec.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %q: %w", spec.commonName, err)
	}
	if k == nil {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("parse issued certificate: %w", err)
		}
		return &keyPair{cert: c, certPEM: encodeCert(der)}, nil
	}
	return finishKeyPair(der, k)
}

func finishKeyPair(der []byte, k *ecdsa.PrivateKey) (*keyPair, error) {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse new certificate: %w", err)
	}
	keyPEM, err := encodeKey(k)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: c, key: k, certPEM: encodeCert(der), keyPEM: keyPEM}, nil
}

// verifiedBy reports whether c chains to the CA for the given usage at now.
func verifiedBy(c *x509.Certificate, ca *x509.Certificate, now time.Time, usage x509.ExtKeyUsage) bool {
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	_, err := c.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err == nil
}
