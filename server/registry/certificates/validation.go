package certificates

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// knownUsages are the key usages a request may ask for (upstream's list).
func knownUsages() sets.Set[string] {
	return sets.New[string]("signing", "digital signature", "content commitment", "key encipherment",
		"key agreement", "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
		"server auth", "client auth", "code signing", "email protection", "s/mime", "ipsec end system",
		"ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc")
}

// options relax the rules for data stored before they applied, as
// upstream's certificateValidationOptions do: an update may keep what the
// stored object already had.
type options struct {
	legacySigner, bothApprovedAndDenied, duplicateConditions bool
}

// optionsFor is the options of an update of old (nil: a create).
func optionsFor(old *certificatesv1.CertificateSigningRequest) options {
	if old == nil {
		return options{}
	}
	return options{
		legacySigner:          old.Spec.SignerName == certificatesv1beta1.LegacyUnknownSignerName,
		bothApprovedAndDenied: has(old, certificatesv1.CertificateApproved) && has(old, certificatesv1.CertificateDenied),
		duplicateConditions:   hasDuplicateConditions(old),
	}
}

func validateCreate(c *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validateObject(c, options{})
}

// validateObject is upstream's validateCertificateSigningRequest: the
// request, usages, signer name, expiration, conditions and certificate.
func validateObject(c *certificatesv1.CertificateSigningRequest, opts options) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if _, err := ParseRequest(c.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), "<request>", err.Error()))
	}
	errs = append(errs, validateUsages(c.Spec.Usages, spec.Child("usages"))...)
	if c.Spec.SignerName == certificatesv1beta1.LegacyUnknownSignerName && !opts.legacySigner {
		errs = append(errs, field.Invalid(spec.Child("signerName"), c.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, registry.ValidateSignerName(c.Spec.SignerName, spec.Child("signerName"))...)
	}
	if s := c.Spec.ExpirationSeconds; s != nil && *s < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateConditions(c.Status.Conditions, field.NewPath("status", "conditions"), opts)...)
	if len(c.Status.Certificate) > 0 {
		if err := validateCertificate(c.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

// ParseRequest decodes a PEM CERTIFICATE REQUEST and checks its signature.
func ParseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	if len(pemBytes) == 0 {
		return nil, errors.New("a PEM CERTIFICATE REQUEST is required")
	}
	blk, _ := pem.Decode(pemBytes)
	if blk == nil || blk.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing the certificate request: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("the request's signature is invalid: %w", err)
	}
	return csr, nil
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

// validateConditions: type and status set, statuses True/False/Unknown
// (only True for Approved, Denied and Failed), no type twice, and not both
// Approved and Denied.
func validateConditions(conds []certificatesv1.CertificateSigningRequestCondition, p *field.Path, opts options) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[certificatesv1.RequestConditionType]()
	for i, c := range conds {
		cp := p.Index(i)
		if c.Type == "" {
			errs = append(errs, field.Required(cp.Child("type"), ""))
		}
		errs = append(errs, validateConditionStatus(c, cp.Child("status"))...)
		if seen.Has(c.Type) && !opts.duplicateConditions {
			errs = append(errs, field.Duplicate(cp.Child("type"), c.Type))
		}
		seen.Insert(c.Type)
	}
	if seen.Has(certificatesv1.CertificateApproved) && seen.Has(certificatesv1.CertificateDenied) && !opts.bothApprovedAndDenied {
		errs = append(errs, field.Invalid(p, conds, "Approved and Denied conditions are mutually exclusive"))
	}
	return errs
}

func validateConditionStatus(c certificatesv1.CertificateSigningRequestCondition, p *field.Path) field.ErrorList {
	allowed := []string{"False", "True", "Unknown"}
	if isApproval(c.Type) || c.Type == certificatesv1.CertificateFailed {
		allowed = []string{"True"}
	}
	switch {
	case c.Status == "":
		return field.ErrorList{field.Required(p, "")}
	case !sets.New(allowed...).Has(string(c.Status)):
		return field.ErrorList{field.NotSupported(p, c.Status, allowed)}
	}
	return nil
}

func hasDuplicateConditions(c *certificatesv1.CertificateSigningRequest) bool {
	seen := sets.New[certificatesv1.RequestConditionType]()
	for _, cd := range c.Status.Conditions {
		if seen.Has(cd.Type) {
			return true
		}
		seen.Insert(cd.Type)
	}
	return false
}

// validateUpdate is upstream's update validation: the rules of a new
// request (relaxed for what old already had), conditions of type
// Approved, Denied and Failed never removed, and a certificate once
// issued never changed.
func validateUpdate(c, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	errs := validateObject(c, optionsFor(old))
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if count(c, t) < count(old, t) {
			errs = append(errs, field.Forbidden(field.NewPath("status", "conditions"), fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if len(old.Status.Certificate) > 0 && !bytes.Equal(old.Status.Certificate, c.Status.Certificate) {
		errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
	}
	return errs
}

func has(c *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	return count(c, t) > 0
}

func count(c *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) int {
	n := 0
	for _, cd := range c.Status.Conditions {
		if cd.Type == t {
			n++
		}
	}
	return n
}

// validateCertificate: one or more header-less PEM CERTIFICATE blocks
// that parse.
func validateCertificate(data []byte) error {
	n := 0
	for rest := data; ; n++ {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		switch {
		case blk.Type != "CERTIFICATE":
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", blk.Type)
		case len(blk.Headers) != 0:
			return errors.New("no PEM block headers are permitted")
		}
		certs, err := x509.ParseCertificates(blk.Bytes)
		if err != nil {
			return fmt.Errorf("parsing certificate %d: %w", n, err)
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
	}
	if n == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}
