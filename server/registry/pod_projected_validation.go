package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of maxExpirationSeconds of podCertificate projections and
// PodCertificateRequests (upstream's certificates.MinMaxExpirationSeconds,
// MaxMaxExpirationSeconds and KubernetesMaxMaxExpirationSeconds).
const (
	MinPodCertExpirationSeconds           = 60 * 60
	MaxPodCertExpirationSeconds           = 91 * 24 * 60 * 60
	MaxKubernetesPodCertExpirationSeconds = 24 * 60 * 60
)

var podCertKeyTypes = []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}

// validateProjected is upstream's validateProjectedVolumeSource: the
// default mode and user, then each source (exactly one kind per source,
// no path twice across the volume).
func validateProjected(pv *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	errs := validateMode(pv.DefaultMode, p.Child("defaultMode"))
	errs = append(errs, validateUserID(pv.DefaultUser, p.Child("defaultUser"))...)
	paths := sets.New[string]()
	for i := range pv.Sources {
		errs = append(errs, validateProjection(&pv.Sources[i], p.Child("sources").Index(i), p, paths)...)
	}
	return errs
}

// validateProjection checks one source; vp is the volume's path, where
// upstream reports duplicate paths.
func validateProjection(s *corev1.VolumeProjection, sp, vp *field.Path, paths sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	claim := func(path string, v interface{}) {
		if paths.Has(path) {
			errs = append(errs, field.Invalid(vp, v, "conflicting duplicate paths"))
		}
		paths.Insert(path)
	}
	n := 0
	if s.Secret != nil {
		n++
		errs = append(errs, validateProjectedItems(s.Secret.Name, s.Secret.Items, sp.Child("secret"), claim)...)
	}
	if s.ConfigMap != nil {
		n++
		errs = append(errs, validateProjectedItems(s.ConfigMap.Name, s.ConfigMap.Items, sp.Child("configMap"), claim)...)
	}
	if s.DownwardAPI != nil {
		n++
		for _, f := range s.DownwardAPI.Items {
			if f.Path != "" {
				claim(f.Path, f.Path)
			}
		}
	}
	if s.ServiceAccountToken != nil {
		n++
		errs = append(errs, validateTokenProjection(s.ServiceAccountToken, sp.Child("serviceAccountToken"), vp)...)
	}
	if s.ClusterTrustBundle != nil {
		n++
		errs = append(errs, validateCTBProjection(s.ClusterTrustBundle, sp.Child("clusterTrustBundle"))...)
		claim(s.ClusterTrustBundle.Path, s.ClusterTrustBundle.Path)
	}
	if s.PodCertificate != nil {
		n++
		errs = append(errs, validatePodCertProjection(s.PodCertificate, sp.Child("podCertificate"), claim)...)
	}
	if n > 1 {
		errs = append(errs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
	}
	return errs
}

func validateProjectedItems(name string, items []corev1.KeyToPath, p *field.Path, claim func(string, interface{})) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	errs = append(errs, validateKeyToPaths(items, p.Child("items"))...)
	for _, it := range items {
		if it.Path != "" {
			claim(it.Path, name)
		}
	}
	return errs
}

func validateTokenProjection(t *corev1.ServiceAccountTokenProjection, p, vp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch exp := t.ExpirationSeconds; {
	case exp == nil:
		errs = append(errs, field.Required(p.Child("expirationSeconds"), ""))
	case *exp < 10*60:
		errs = append(errs, field.Invalid(p.Child("expirationSeconds"), *exp, "may not specify a duration less than 10 minutes"))
	case *exp > 1<<32:
		errs = append(errs, field.Invalid(p.Child("expirationSeconds"), *exp, "may not specify a duration larger than 2^32 seconds"))
	}
	if t.Path == "" {
		errs = append(errs, field.Required(vp.Child("path"), ""))
	} else {
		errs = append(errs, validateLocalNonReservedPath(t.Path, vp.Child("path"))...)
	}
	return append(errs, validateUserID(t.User, p.Child("user"))...)
}

// validateCTBProjection: a bundle by name (no selector) or by signer
// with a label selector, and a path.
func validateCTBProjection(c *corev1.ClusterTrustBundleProjection, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Name != nil && c.SignerName != nil:
		errs = append(errs, field.Invalid(p, c, "only one of name and signerName may be used"))
	case c.Name != nil:
		errs = append(errs, validateCTBProjectionName(*c.Name, p.Child("name"))...)
		if c.LabelSelector != nil {
			errs = append(errs, field.Invalid(p.Child("labelSelector"), c.LabelSelector, "labelSelector must be unset if name is specified"))
		}
	case c.SignerName != nil:
		if *c.SignerName == "" {
			errs = append(errs, field.Required(p.Child("signerName"), "must be a valid signer name"))
		}
		errs = append(errs, ValidateSignerName(*c.SignerName, p.Child("signerName"))...)
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector,
			metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	default:
		errs = append(errs, field.Required(p, "either name or signerName must be specified"))
	}
	if c.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateUserID(c.User, p.Child("user"))...)
	return append(errs, validateLocalNonReservedPath(c.Path, p.Child("path"))...)
}

func validateCTBProjectionName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p, "must be a valid object name"))
	}
	signer, _ := clusterTrustBundleSigner(name)
	for _, msg := range ClusterTrustBundleNameFn(signer)(name, false) {
		errs = append(errs, field.Invalid(p, name, fmt.Sprintf("not a valid clustertrustbundlename: %v", msg)))
	}
	return errs
}

// validatePodCertProjection: a signer, a key type, maxExpirationSeconds
// in bounds when set, and at least one of the three paths.
func validatePodCertProjection(c *corev1.PodCertificateProjection, p *field.Path, claim func(string, interface{})) field.ErrorList {
	errs := ValidateSignerName(c.SignerName, p.Child("signerName"))
	if c.UserAnnotations != nil {
		errs = append(errs, ValidateUserAnnotations(c.UserAnnotations, p.Child("userAnnotations"))...)
	}
	errs = append(errs, validateUserID(c.User, p.Child("user"))...)
	if !sets.New(podCertKeyTypes...).Has(c.KeyType) {
		errs = append(errs, field.NotSupported(p.Child("keyType"), c.KeyType, podCertKeyTypes))
	}
	if m := c.MaxExpirationSeconds; m != nil {
		if *m < MinPodCertExpirationSeconds {
			errs = append(errs, field.Invalid(p.Child("maxExpirationSeconds"), *m, fmt.Sprintf("if provided, maxExpirationSeconds must be >= %d", MinPodCertExpirationSeconds)))
		}
		hi := int32(MaxPodCertExpirationSeconds)
		if IsKubernetesSignerName(c.SignerName) {
			hi = MaxKubernetesPodCertExpirationSeconds
		}
		if *m > hi {
			errs = append(errs, field.Invalid(p.Child("maxExpirationSeconds"), *m, fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", hi)))
		}
	}
	n := 0
	for _, f := range []struct{ name, path string }{
		{"credentialBundlePath", c.CredentialBundlePath}, {"keyPath", c.KeyPath}, {"certificateChainPath", c.CertificateChainPath},
	} {
		if f.path == "" {
			continue
		}
		n++
		errs = append(errs, validateLocalNonReservedPath(f.path, p.Child(f.name))...)
		claim(f.path, f.path)
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"))
	}
	return errs
}

// validateLocalNonReservedPath is upstream's: relative, no '..' element,
// not starting with "..".
func validateLocalNonReservedPath(target string, p *field.Path) field.ErrorList {
	errs := validateLocalDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, field.Invalid(p, target, "must not start with '..'"))
	}
	return errs
}

func validateUserID(u *int64, p *field.Path) field.ErrorList {
	if u == nil {
		return nil
	}
	return msgs(*u, p, validation.IsValidUserID(*u))
}
