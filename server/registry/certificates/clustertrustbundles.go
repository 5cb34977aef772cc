package certificates

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// maxTrustBundleSize is upstream's MaxTrustBundleSize (1 MiB).
const maxTrustBundleSize = 1 * 1024 * 1024

func ctbOf(o runtime.Object) *certificatesv1.ClusterTrustBundle {
	return o.(*certificatesv1.ClusterTrustBundle)
}

// clusterTrustBundles is upstream's clustertrustbundle strategy: cluster
// scoped, no status, the name tied to the signer, the signer immutable.
func clusterTrustBundles() registry.Def {
	return registry.Def{GroupVersion: certificatesv1.SchemeGroupVersion, Resource: "clustertrustbundles",
		Kind:    "ClusterTrustBundle",
		New:     registry.NewObjects[certificatesv1.ClusterTrustBundle](),
		NewList: registry.NewObjects[certificatesv1.ClusterTrustBundleList](),
		Hooks: registry.Hooks{
			// The name rules depend on spec.signerName: validateCTB checks it.
			NameFn: func(string, bool) []string { return nil },
			Validate: func(o runtime.Object) field.ErrorList {
				return append(validateCTBName(ctbOf(o)), validateCTB(ctbOf(o), true)...)
			},
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
				return validateCTBUpdate(ctbOf(o), ctbOf(old))
			},
			Fields: func(o runtime.Object, set fields.Set) { set["spec.signerName"] = ctbOf(o).Spec.SignerName },
			Columns: []metav1.TableColumnDefinition{
				registry.Col("SignerName", "string", 0, certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]),
			},
			Row: func(o runtime.Object) []interface{} {
				signer := ctbOf(o).Spec.SignerName
				if signer == "" {
					signer = "<none>"
				}
				return []interface{}{signer}
			},
		}}
}

// validateCTBName is the part of upstream's metadata validation that
// depends on the signer (the generic strategy checks the rest).
func validateCTBName(b *certificatesv1.ClusterTrustBundle) field.ErrorList {
	nameFn := registry.ClusterTrustBundleNameFn(b.Spec.SignerName)
	p := field.NewPath("metadata")
	var errs field.ErrorList
	if b.GenerateName != "" {
		for _, msg := range nameFn(b.GenerateName, true) {
			errs = append(errs, field.Invalid(p.Child("generateName"), b.GenerateName, msg))
		}
	}
	if b.Name != "" {
		for _, msg := range nameFn(b.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), b.Name, msg))
		}
	}
	return errs
}

// validateCTB is the rest of upstream's ValidateClusterTrustBundle: the
// signer is well formed and (when parse) the bundle is one or more
// distinct CA certificates.
func validateCTB(b *certificatesv1.ClusterTrustBundle, parse bool) field.ErrorList {
	var errs field.ErrorList
	if b.Spec.SignerName != "" {
		errs = append(errs, registry.ValidateSignerName(b.Spec.SignerName, field.NewPath("spec", "signerName"))...)
	}
	if parse {
		errs = append(errs, validateTrustBundle(b.Spec.TrustBundle, field.NewPath("spec", "trustBundle"))...)
	}
	return errs
}

// validateCTBUpdate: an unchanged bundle is not parsed again (Go's PEM
// and X.509 parsers may have grown stricter since it was stored), and
// the signer cannot change.
func validateCTBUpdate(b, old *certificatesv1.ClusterTrustBundle) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&b.ObjectMeta, false, registry.ClusterTrustBundleNameFn(b.Spec.SignerName), field.NewPath("metadata"))
	errs = append(errs, validateCTB(b, b.Spec.TrustBundle != old.Spec.TrustBundle)...)
	return append(errs, apivalidation.ValidateImmutableField(b.Spec.SignerName, old.Spec.SignerName, field.NewPath("spec", "signerName"))...)
}

// validateTrustBundle is upstream's: only header-less CERTIFICATE blocks
// of X.509 CA certificates with valid basic constraints, at least one,
// none twice.
func validateTrustBundle(in string, p *field.Path) field.ErrorList {
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(p, "", maxTrustBundleSize)}
	}
	var errs field.ErrorList
	seen := map[string][]int{}
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if msg := trustAnchorProblem(b); msg != "" {
			errs = append(errs, field.Invalid(p, "<value omitted>", fmt.Sprintf("entry %d %s", i, msg)))
			continue
		}
		seen[string(b.Bytes)] = append(seen[string(b.Bytes)], i)
	}
	if len(errs) > 0 {
		return errs
	}
	if len(seen) == 0 {
		return field.ErrorList{field.Invalid(p, "<value omitted>", "at least one trust anchor must be provided")}
	}
	for _, idx := range seen {
		if len(idx) > 1 {
			errs = append(errs, field.Invalid(p, "<value omitted>", fmt.Sprintf("duplicate trust anchor (indices %v)", idx)))
		}
	}
	return errs
}

// trustAnchorProblem says what is wrong with one block ("" for nothing).
func trustAnchorProblem(b *pem.Block) string {
	switch {
	case b.Type != "CERTIFICATE":
		return "has bad block type: " + b.Type
	case len(b.Headers) != 0:
		return "has PEM block headers"
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	switch {
	case err != nil:
		return "does not parse as X.509"
	case !cert.IsCA:
		return "does not have the CA bit set"
	case !cert.BasicConstraintsValid:
		return "has invalid basic constraints"
	}
	return ""
}
