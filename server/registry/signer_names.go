package registry

import (
	"fmt"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxSignerName fits <fqdn>/<namespace>.<name>: a DNS-1123 subdomain, a
// DNS-1123 label, a subdomain and the '/' and '.' between them.
const maxSignerName = 2*utilvalidation.DNS1123SubdomainMaxLength + utilvalidation.DNS1123LabelMaxLength + 2

// ValidateSignerName is upstream's ValidateSignerName (pkg/apis/core/
// validation/names.go): exactly one '/' between a domain of at least two
// DNS-1123 labels (at most 253 characters) and a path of '.'-separated
// DNS-1123 subdomains, at most 571 characters in all. CertificateSigning-
// Requests, ClusterTrustBundles, PodCertificateRequests and the pod's
// clusterTrustBundle and podCertificate projections share it.
func ValidateSignerName(name string, p *field.Path) field.ErrorList {
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

// IsKubernetesSignerName reports a signer reserved by the Kubernetes
// project (kubernetes.io or a subdomain of it).
func IsKubernetesSignerName(signer string) bool {
	host, _, _ := strings.Cut(signer, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// ClusterTrustBundleNameFn is upstream's ValidateClusterTrustBundleName: a
// bundle without a signer has a DNS-1123 subdomain name without ':'; one
// with a signer is named <signer with '/' as ':'>:<DNS-1123 subdomain>.
func ClusterTrustBundleNameFn(signer string) apivalidation.ValidateNameFunc {
	return func(name string, prefix bool) []string {
		if signer == "" {
			if strings.Contains(name, ":") {
				return []string{`ClusterTrustBundle without signer name must not have ":" in its name`}
			}
			return apivalidation.NameIsDNSSubdomain(name, prefix)
		}
		want := strings.ReplaceAll(signer, "/", ":") + ":"
		if !strings.HasPrefix(name, want) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signer, want)}
		}
		return apivalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, want), prefix)
	}
}

// clusterTrustBundleSigner is the signer a bundle name refers to (the
// part before the last ':', with ':' as '/'), as upstream's
// extractSignerNameFromClusterTrustBundleName.
func clusterTrustBundleSigner(name string) (string, bool) {
	i := strings.LastIndex(name, ":")
	if i < 0 {
		return "", false
	}
	return strings.ReplaceAll(name[:i], ":", "/"), true
}

// ValidateUserAnnotations is upstream's: domain-prefixed keys (compared in
// lower case) and the annotation size limit.
func ValidateUserAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k := range annotations {
		errs = append(errs, utilvalidation.IsDomainPrefixedKey(p, strings.ToLower(k))...)
	}
	if err := apivalidation.ValidateAnnotationsSize(annotations); err != nil {
		errs = append(errs, field.TooLong(p, "", apivalidation.TotalAnnotationSizeLimitB))
	}
	return errs
}
