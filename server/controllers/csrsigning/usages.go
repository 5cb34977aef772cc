package csrsigning

import (
	"crypto/x509"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// validateClient is upstream's check of a kube-apiserver-client request:
// no subject alternative names, client auth, nothing beyond digital
// signature and key encipherment.
func validateClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch {
	case len(req.DNSNames) > 0:
		return errors.New("DNS subjectAltNames are not allowed")
	case len(req.EmailAddresses) > 0:
		return errors.New("Email subjectAltNames are not allowed")
	case len(req.IPAddresses) > 0:
		return errors.New("IP subjectAltNames are not allowed")
	case len(req.URIs) > 0:
		return errors.New("URI subjectAltNames are not allowed")
	}
	client := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageClientAuth:
			client = true
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !client {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}

// keyUsages maps a request's usages to x509 key and extended key usages.
func keyUsages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	key := map[certificatesv1.KeyUsage]x509.KeyUsage{
		certificatesv1.UsageSigning: x509.KeyUsageDigitalSignature, certificatesv1.UsageDigitalSignature: x509.KeyUsageDigitalSignature,
		certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment, certificatesv1.UsageKeyEncipherment: x509.KeyUsageKeyEncipherment,
		certificatesv1.UsageKeyAgreement: x509.KeyUsageKeyAgreement, certificatesv1.UsageDataEncipherment: x509.KeyUsageDataEncipherment,
		certificatesv1.UsageCertSign: x509.KeyUsageCertSign, certificatesv1.UsageCRLSign: x509.KeyUsageCRLSign,
		certificatesv1.UsageEncipherOnly: x509.KeyUsageEncipherOnly, certificatesv1.UsageDecipherOnly: x509.KeyUsageDecipherOnly,
	}
	ext := map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
		certificatesv1.UsageAny: x509.ExtKeyUsageAny, certificatesv1.UsageServerAuth: x509.ExtKeyUsageServerAuth,
		certificatesv1.UsageClientAuth: x509.ExtKeyUsageClientAuth, certificatesv1.UsageCodeSigning: x509.ExtKeyUsageCodeSigning,
		certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection, certificatesv1.UsageSMIME: x509.ExtKeyUsageEmailProtection,
		certificatesv1.UsageIPsecEndSystem: x509.ExtKeyUsageIPSECEndSystem, certificatesv1.UsageIPsecTunnel: x509.ExtKeyUsageIPSECTunnel,
		certificatesv1.UsageIPsecUser: x509.ExtKeyUsageIPSECUser, certificatesv1.UsageTimestamping: x509.ExtKeyUsageTimeStamping,
		certificatesv1.UsageOCSPSigning: x509.ExtKeyUsageOCSPSigning, certificatesv1.UsageMicrosoftSGC: x509.ExtKeyUsageMicrosoftServerGatedCrypto,
		certificatesv1.UsageNetscapeSGC: x509.ExtKeyUsageNetscapeServerGatedCrypto,
	}
	var ku x509.KeyUsage
	var eku []x509.ExtKeyUsage
	for _, u := range usages {
		if k, ok := key[u]; ok {
			ku |= k
		} else if e, ok := ext[u]; ok {
			eku = append(eku, e)
		} else {
			return 0, nil, fmt.Errorf("unrecognized usage: %s", u)
		}
	}
	return ku, eku, nil
}
