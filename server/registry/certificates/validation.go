package certificates

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// knownUsages are the key usages a request may ask for (upstream's list).
func knownUsages() sets.Set[string] {
	return sets.New[string]("signing", "digital signature", "content commitment", "key encipherment",
		"key agreement", "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
		"server auth", "client auth", "code signing", "email protection", "s/mime", "ipsec end system",
		"ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc")
}

func validateCreate(c *certificatesv1.CertificateSigningRequest) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if _, err := ParseRequest(c.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), "<request>", err.Error()))
	}
	errs = append(errs, validateSignerName(c.Spec.SignerName, spec.Child("signerName"))...)
	if s := c.Spec.ExpirationSeconds; s != nil && *s < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateUsages(c.Spec.Usages, spec.Child("usages"))...)
	return append(errs, validateConditions(c.Status.Conditions, field.NewPath("status", "conditions"))...)
}

// ParseRequest decodes a PEM CERTIFICATE REQUEST and checks its signature.
func ParseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	if len(pemBytes) == 0 {
		return nil, fmt.Errorf("a PEM CERTIFICATE REQUEST is required")
	}
	blk, _ := pem.Decode(pemBytes)
	if blk == nil || blk.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("PEM block type must be CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return nil, err
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("the request's signature is invalid: %w", err)
	}
	return csr, nil
}

// validateSignerName: a domain-prefixed path, e.g. example.com/signer.
func validateSignerName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	domain, path, ok := strings.Cut(name, "/")
	if !ok || path == "" {
		return field.ErrorList{field.Invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Subdomain(domain) {
		errs = append(errs, field.Invalid(p, name, "the domain part "+msg))
	}
	if len(name) > 571 {
		errs = append(errs, field.TooLong(p, "", 571))
	}
	return errs
}

func validateUsages(usages []certificatesv1.KeyUsage, p *field.Path) field.ErrorList {
	if len(usages) == 0 {
		return field.ErrorList{field.Required(p, "usages must be provided")}
	}
	var errs field.ErrorList
	seen, known := sets.New[string](), knownUsages()
	for i, u := range usages {
		switch {
		case !known.Has(string(u)):
			errs = append(errs, field.NotSupported(p.Index(i), u, sets.List(known)))
		case seen.Has(string(u)):
			errs = append(errs, field.Duplicate(p.Index(i), u))
		}
		seen.Insert(string(u))
	}
	return errs
}

// validateConditions: types set, statuses True/False/Unknown (True for
// Approved, Denied and Failed), each of those at most once, and not both
// Approved and Denied.
func validateConditions(conds []certificatesv1.CertificateSigningRequestCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[certificatesv1.RequestConditionType]()
	for i, c := range conds {
		cp := p.Index(i)
		switch {
		case c.Type == "":
			errs = append(errs, field.Required(cp.Child("type"), ""))
		case isApproval(c.Type) || c.Type == certificatesv1.CertificateFailed:
			if c.Status != "True" {
				errs = append(errs, field.NotSupported(cp.Child("status"), c.Status, []string{"True"}))
			}
			if seen.Has(c.Type) {
				errs = append(errs, field.Duplicate(cp.Child("type"), c.Type))
			}
		default:
			if c.Status != "True" && c.Status != "False" && c.Status != "Unknown" {
				errs = append(errs, field.NotSupported(cp.Child("status"), c.Status, []string{"True", "False", "Unknown"}))
			}
		}
		seen.Insert(c.Type)
	}
	if seen.Has(certificatesv1.CertificateApproved) && seen.Has(certificatesv1.CertificateDenied) {
		errs = append(errs, field.Invalid(p, conds, "Approved and Denied conditions are mutually exclusive"))
	}
	return errs
}

// validateUpdate: the rules of a new request on the result, conditions of
// type Approved, Denied and Failed are never removed, and a certificate
// once issued never changes.
func validateUpdate(c, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	errs := validateConditions(c.Status.Conditions, field.NewPath("status", "conditions"))
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if has(old, t) && !has(c, t) {
			errs = append(errs, field.Forbidden(field.NewPath("status", "conditions"), fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	cert := field.NewPath("status", "certificate")
	if len(old.Status.Certificate) > 0 && !apiequality.Semantic.DeepEqual(old.Status.Certificate, c.Status.Certificate) {
		errs = append(errs, field.Forbidden(cert, "updates may not modify existing certificate content"))
	} else if len(c.Status.Certificate) > 0 {
		errs = append(errs, validateCertificate(c.Status.Certificate, cert)...)
	}
	return errs
}

func has(c *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, cd := range c.Status.Conditions {
		if cd.Type == t {
			return true
		}
	}
	return false
}

// validateCertificate: one or more PEM CERTIFICATE blocks that parse.
func validateCertificate(data []byte, p *field.Path) field.ErrorList {
	n := 0
	for rest := data; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(p, "<certificate data>", fmt.Sprintf("only CERTIFICATE PEM blocks are allowed, found %q", blk.Type))}
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return field.ErrorList{field.Invalid(p, "<certificate data>", err.Error())}
		}
		n++
	}
	if n == 0 {
		return field.ErrorList{field.Invalid(p, "<certificate data>", "must contain at least one CERTIFICATE PEM block")}
	}
	return nil
}
