package certificates

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Size limits of upstream's PodCertificateRequest fields.
const (
	maxStubPKCS10RequestSize = 10 * 1024
	maxCertificateChainSize  = 100 * 1024
)

var (
	pkcs10Path       = field.NewPath("spec", "stubPKCS10Request")
	certChainPath    = field.NewPath("status", "certificateChain")
	notBeforePath    = field.NewPath("status", "notBefore")
	notAfterPath     = field.NewPath("status", "notAfter")
	beginRefreshPath = field.NewPath("status", "beginRefreshAt")
)

// timeNow is the API server's clock for the notBefore check (a variable
// for tests).
var timeNow = time.Now

// validatePCRKey: certificates.k8s.io/v1 carries the key as a stub
// PKCS#10 request (upstream's internal type also has the deprecated
// pkixPublicKey and proofOfPossession of v1beta1, which v1 cannot set).
func validatePCRKey(s *certificatesv1.PodCertificateRequestSpec) field.ErrorList {
	if len(s.StubPKCS10Request) == 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), field.OmitValueType{},
			"exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set")}
	}
	return validateStubPKCS10(s.StubPKCS10Request)
}

// validateStubPKCS10 checks the key type and the request's signature;
// its contents are the signer's business.
func validateStubPKCS10(der []byte) field.ErrorList {
	if len(der) > maxStubPKCS10RequestSize {
		return field.ErrorList{field.TooLong(pkcs10Path, der, maxStubPKCS10RequestSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(pkcs10Path, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	if errs := validateKeyType(req.PublicKey, pkcs10Path, "elliptic public keys must use curve P256, P384, or P521"); errs != nil {
		return errs
	}
	if req.CheckSignature() != nil {
		return field.ErrorList{field.Invalid(pkcs10Path, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

// validateKeyType accepts Ed25519, ECDSA on P-256/384/521 and RSA of
// 3072 or 4096 bits.
func validateKeyType(pub any, p *field.Path, curveMsg string) field.ErrorList {
	switch k := pub.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() && k.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(p, "curve "+k.Curve.Params().Name, curveMsg)}
		}
	case *rsa.PublicKey:
		if bits := k.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(p, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	return nil
}

// validatePCRStatus is upstream's ValidatePodCertificateRequestStatusUpdate
// (the generic strategy checks the metadata): at most one of Issued,
// Denied and Failed, with status True; nothing changes after one of them;
// Denied and Failed carry only conditions; Issued carries a chain whose
// leaf certifies the requested key and whose times match the status.
func validatePCRStatus(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	if errs := validatePCRConditions(r); len(errs) > 0 {
		return errs
	}
	if pcrTerminal(old) != "" {
		return statusUnchanged(r.Status, old.Status, "immutable after PodCertificateRequest is issued, denied, or failed")
	}
	switch pcrTerminal(r) {
	case certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
		return statusUnchanged(r.Status, certificatesv1.PodCertificateRequestStatus{Conditions: r.Status.Conditions},
			"non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	case certificatesv1.PodCertificateRequestConditionTypeIssued:
		return validateIssued(r, old, now)
	}
	return statusUnchanged(r.Status, old.Status, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

func validatePCRConditions(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	var errs field.ErrorList
	known := []string{certificatesv1.PodCertificateRequestConditionTypeIssued,
		certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed}
	n := 0
	for i, c := range r.Status.Conditions {
		p := field.NewPath("status", "conditions").Index(i)
		switch c.Type {
		case known[0], known[1], known[2]:
			if n++; n > 1 {
				errs = append(errs, field.Invalid(p.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != "True" {
				errs = append(errs, field.NotSupported(p.Child("status"), c.Status, []string{"True"}))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), c.Type, known))
		}
	}
	return append(errs, metav1validation.ValidateConditions(r.Status.Conditions, field.NewPath("status", "conditions"))...)
}

// validateIssued checks an issuance: the leaf, its key, the times.
func validateIssued(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	chain := r.Status.CertificateChain
	if len(chain) > maxCertificateChainSize {
		return field.ErrorList{field.TooLong(certChainPath, chain, maxCertificateChainSize)}
	}
	blk, rest := pem.Decode([]byte(chain))
	switch {
	case blk == nil:
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must contain at least one certificate")}
	case blk.Type != "CERTIFICATE":
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
	}
	leaf, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "leaf certificate does not parse as valid X.509")}
	}
	errs := validateLeafNames(leaf)
	if e := validateLeafKey(leaf, old, chain); e != nil {
		return append(errs, e...)
	}
	if e := validateIssuedTimes(r, leaf, now); e != nil {
		return append(errs, e...)
	}
	return append(errs, validateIntermediates(rest, chain)...)
}

func validateLeafNames(leaf *x509.Certificate) field.ErrorList {
	var errs field.ErrorList
	for _, n := range leaf.DNSNames {
		if n == "" {
			errs = append(errs, field.Invalid(certChainPath, n, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(n, "..") {
			errs = append(errs, field.Invalid(certChainPath, n, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".") {
			errs = append(errs, field.Invalid(certChainPath, n, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, e := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(e); err != nil {
			errs = append(errs, field.Invalid(certChainPath, e, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	return errs
}

// validateLeafKey: the leaf was issued to the key of the (stored) request.
func validateLeafKey(leaf *x509.Certificate, old *certificatesv1.PodCertificateRequest, chain string) field.ErrorList {
	req, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request)
	if err != nil {
		return field.ErrorList{field.Invalid(pkcs10Path, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	k, ok := req.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if ok && !k.Equal(leaf.PublicKey) {
		return field.ErrorList{field.Invalid(certChainPath, chain, "leaf certificate was not issued to the requested public key")}
	}
	return nil
}

// validateIssuedTimes: notBefore, notAfter and beginRefreshAt are set,
// match the leaf, notBefore is within 5 minutes of now, the lifetime is
// 1 hour to maxExpirationSeconds, and the refresh falls at least 10
// minutes inside the validity.
func validateIssuedTimes(r *certificatesv1.PodCertificateRequest, leaf *x509.Certificate, now time.Time) field.ErrorList {
	st := r.Status
	var errs field.ErrorList
	if st.NotBefore == nil {
		errs = append(errs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		errs = append(errs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(errs) > 0 {
		return errs
	}
	nb, na, refresh := st.NotBefore.Time, st.NotAfter.Time, st.BeginRefreshAt.Time
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	switch {
	case !nb.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(notBeforePath, nb, "must be set to the NotBefore time encoded in the leaf certificate")}
	case !(nb.After(now.Add(-5*time.Minute)) && nb.Before(now.Add(5*time.Minute))):
		return field.ErrorList{field.Invalid(notBeforePath, nb, "must be set to within 5 minutes of kube-apiserver's current time")}
	case !na.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(notAfterPath, na, "must be set to the NotAfter time encoded in the leaf certificate")}
	case lifetime < time.Hour:
		return field.ErrorList{field.Invalid(certChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")}
	case r.Spec.MaxExpirationSeconds != nil && lifetime > time.Duration(*r.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(certChainPath, lifetime,
			fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *r.Spec.MaxExpirationSeconds))}
	case refresh.Before(nb.Add(10 * time.Minute)):
		return field.ErrorList{field.Invalid(beginRefreshPath, refresh, "must be at least 10 minutes after status.notBefore")}
	case refresh.After(na.Add(-10 * time.Minute)):
		return field.ErrorList{field.Invalid(beginRefreshPath, refresh, "must be at least 10 minutes before status.notAfter")}
	}
	return nil
}

// validateIntermediates: the rest of the chain is CERTIFICATE blocks that
// parse (the chain itself cannot be verified without its root).
func validateIntermediates(rest []byte, chain string) field.ErrorList {
	for {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			return nil
		}
		if blk.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return field.ErrorList{field.Invalid(certChainPath, chain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}
