package certificates

import (
	"fmt"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxSignerName fits <fqdn>/<namespace>.<name>: a DNS-1123 subdomain, a
// DNS-1123 label, a subdomain and the '/' and '.' between them.
const maxSignerName = 2*utilvalidation.DNS1123SubdomainMaxLength + utilvalidation.DNS1123LabelMaxLength + 2

// validateSignerName is upstream's ValidateSignerName: exactly one '/'
// between a domain of at least two DNS-1123 labels (at most 253
// characters) and a path of '.'-separated DNS-1123 subdomains, at most
// 571 characters in all.
func validateSignerName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	domain, path, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(path, "/") {
		return field.ErrorList{field.Invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	if len(domain) > utilvalidation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(p, "", utilvalidation.DNS1123SubdomainMaxLength))
	}
	labels := strings.Split(domain, ".")
	errs = append(errs, firstInvalid(p, domain, labels, utilvalidation.IsDNS1123Label)...)
	if len(labels) < 2 {
		errs = append(errs, field.Invalid(p, domain, "should be a domain with at least two segments separated by dots"))
	}
	errs = append(errs, firstInvalid(p, path, strings.Split(path, "."), utilvalidation.IsDNS1123Subdomain)...)
	if len(name) > maxSignerName {
		errs = append(errs, field.TooLong(p, "", maxSignerName))
	}
	return errs
}

// firstInvalid reports the first of parts that check refuses (further
// ones would repeat the same messages).
func firstInvalid(p *field.Path, whole string, parts []string, check func(string) []string) field.ErrorList {
	for _, part := range parts {
		msgs := check(part)
		if len(msgs) == 0 {
			continue
		}
		errs := make(field.ErrorList, 0, len(msgs))
		for _, m := range msgs {
			errs = append(errs, field.Invalid(p, whole, fmt.Sprintf("validating label %q: %s", part, m)))
		}
		return errs
	}
	return nil
}
