package pki

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"strings"
)

// servingSpec checks a caller-chosen serving subject and its SANs. The SANs
// are kept exactly as given (order included); only empty or malformed
// entries are refused, and at least one SAN is required because TLS clients
// check the name they dial against the SANs, never against the CN.
func servingSpec(cn string, orgs, dnsNames []string, ips []net.IP) (leafSpec, error) {
	spec, err := clientSpec(cn, orgs)
	if err != nil {
		return leafSpec{}, err
	}
	if len(dnsNames) == 0 && len(ips) == 0 {
		return leafSpec{}, fmt.Errorf("%w: serving certificate for %q needs at least one DNS name or IP", ErrInvalidSubject, cn)
	}
	for _, d := range dnsNames {
		if strings.TrimSpace(d) == "" || strings.ContainsAny(d, " \t\r\n") {
			return leafSpec{}, fmt.Errorf("%w: DNS name %q for %q", ErrInvalidSubject, d, cn)
		}
	}
	for _, ip := range ips {
		if len(ip) != net.IPv4len && len(ip) != net.IPv6len {
			return leafSpec{}, fmt.Errorf("%w: malformed IP address %v for %q", ErrInvalidSubject, ip, cn)
		}
	}
	spec.dnsNames = dnsNames
	spec.ips = ips
	spec.extUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	return spec, nil
}

// SignServingCSR signs a PEM "CERTIFICATE REQUEST" as a TLS serving
// certificate (extended key usage ServerAuth only) for CN=cn, O=orgs with
// exactly the given DNS names and IP addresses as SANs, valid as long as the
// other leaf certificates. As with SignClientCSR, the subject, SANs and
// extensions of the request are ignored: only its public key (proved by its
// signature) is used, so the caller alone decides which names are granted.
func (b *Bundle) SignServingCSR(csrPEM []byte, cn string, orgs []string, dnsNames []string, ips []net.IP) ([]byte, error) {
	spec, err := servingSpec(cn, orgs, dnsNames, ips)
	if err != nil {
		return nil, err
	}
	csr, err := parseServingCSR(csrPEM)
	if err != nil {
		return nil, err
	}
	kp, err := b.ca.issue(b.now(), spec, csr.PublicKey)
	if err != nil {
		return nil, err
	}
	return kp.certPEM, nil
}

// parseServingCSR decodes a PEM certificate request and checks its
// signature (proof of possession of the private key).
func parseServingCSR(csrPEM []byte) (*x509.CertificateRequest, error) {
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
	return csr, nil
}
