package csrsigning

import (
	"crypto/x509"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// usageTables are the x509 key and extended key usages of the API's
// usage names.
func usageTables() (map[certificatesv1.KeyUsage]x509.KeyUsage, map[certificatesv1.KeyUsage]x509.ExtKeyUsage) {
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
	return key, ext
}

// keyUsages maps a request's usages to x509 key usages and sorted,
// distinct extended key usages (upstream's keyUsagesFromStrings).
func keyUsages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	keyUsageOf, extKeyUsageOf := usageTables()
	var ku x509.KeyUsage
	var eku []x509.ExtKeyUsage
	var unknown []certificatesv1.KeyUsage
	for _, u := range usages {
		if k, ok := keyUsageOf[u]; ok {
			ku |= k
		} else if e, ok := extKeyUsageOf[u]; ok {
			eku = append(eku, e)
		} else {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		return 0, nil, fmt.Errorf("unrecognized usage values: %q", unknown)
	}
	slices.Sort(eku)
	return ku, slices.Compact(eku), nil
}
