package certificates

import (
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

// DefaultMaxExpirationSeconds is spec.maxExpirationSeconds when unset
// (the bounds are server/registry's, shared with the pods' projections).
const DefaultMaxExpirationSeconds = 24 * 60 * 60

func pcrOf(o runtime.Object) *certificatesv1.PodCertificateRequest {
	return o.(*certificatesv1.PodCertificateRequest)
}

// podCertificateRequests is upstream's podcertificaterequest strategy:
// namespaced, the status cleared on create and kept by updates, the spec
// immutable; the status subresource is for signers (the sign check is
// server/admission/certificates'), and a request that reached Issued,
// Denied or Failed never changes again.
func podCertificateRequests() registry.Def {
	return registry.Def{GroupVersion: certificatesv1.SchemeGroupVersion, Resource: "podcertificaterequests",
		Kind: "PodCertificateRequest", Namespaced: true, HasStatus: true,
		New:     registry.NewObjects[certificatesv1.PodCertificateRequest](),
		NewList: registry.NewObjects[certificatesv1.PodCertificateRequestList](),
		Hooks: registry.Hooks{
			Defaults: func(o runtime.Object) {
				if s := &pcrOf(o).Spec; s.MaxExpirationSeconds == nil {
					s.MaxExpirationSeconds = ptr.To[int32](DefaultMaxExpirationSeconds)
				}
			},
			Validate: func(o runtime.Object) field.ErrorList { return validatePCR(pcrOf(o)) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
				return apivalidation.ValidateImmutableField(pcrOf(o).Spec, pcrOf(old).Spec, field.NewPath("spec"))
			},
			PrepareStatus:  registry.ResetMetaForStatus,
			ValidateStatus: func(o, old runtime.Object) field.ErrorList { return validatePCRStatus(pcrOf(o), pcrOf(old), timeNow()) },
			Fields: func(o runtime.Object, set fields.Set) {
				s := pcrOf(o).Spec
				set["spec.signerName"], set["spec.podName"], set["spec.nodeName"] = s.SignerName, s.PodName, string(s.NodeName)
			},
			Columns: []metav1.TableColumnDefinition{
				pcrCol("PodName", "podName"), pcrCol("ServiceAccountName", "serviceAccountName"),
				pcrCol("NodeName", "nodeName"), pcrCol("SignerName", "signerName"),
				registry.Col("State", "string", 0, "Is the request Pending, Issued, Denied, or Failed?"),
				registry.Col("UnverifiedUserAnnotations", "string", 1,
					certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()["unverifiedUserAnnotations"]),
			},
			Row: pcrRow,
		}}
}

func pcrCol(name, jsonName string) metav1.TableColumnDefinition {
	return registry.Col(name, "string", 0, certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()[jsonName])
}

func pcrRow(o runtime.Object) []interface{} {
	r := pcrOf(o)
	return []interface{}{r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName,
		pcrState(r), labels.FormatLabels(r.Spec.UnverifiedUserAnnotations)}
}

// pcrState is kubectl's STATE: Pending until one of the terminal
// conditions is there.
func pcrState(r *certificatesv1.PodCertificateRequest) string {
	state := "Pending"
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			state = c.Type
		}
	}
	return state
}

// validatePCR is upstream's ValidatePodCertificateRequestCreate (the
// generic strategy checks the metadata).
func validatePCR(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	spec := field.NewPath("spec")
	errs := registry.ValidateSignerName(r.Spec.SignerName, spec.Child("signerName"))
	if r.Spec.UnverifiedUserAnnotations != nil {
		errs = append(errs, registry.ValidateUserAnnotations(r.Spec.UnverifiedUserAnnotations, spec.Child("unverifiedUserAnnotations"))...)
	}
	errs = append(errs, validatePCRSubjects(&r.Spec, spec)...)
	if r.Spec.MaxExpirationSeconds == nil {
		return append(errs, field.Required(spec.Child("maxExpirationSeconds"), "must be set"))
	}
	errs = append(errs, validateMaxExpiration(r.Spec.SignerName, *r.Spec.MaxExpirationSeconds, spec.Child("maxExpirationSeconds"))...)
	return append(errs, validatePCRKey(&r.Spec)...)
}

// validatePCRSubjects checks the pod, service account and node names and
// that their UIDs are set (at most 128 characters).
func validatePCRSubjects(s *certificatesv1.PodCertificateRequestSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := []struct {
		field, value string
		check        apivalidation.ValidateNameFunc
	}{
		{"podName", s.PodName, apivalidation.NameIsDNSSubdomain},
		{"serviceAccountName", s.ServiceAccountName, apivalidation.ValidateServiceAccountName},
		{"nodeName", string(s.NodeName), apivalidation.NameIsDNSSubdomain},
	}
	for _, n := range names {
		for _, msg := range n.check(n.value, false) {
			errs = append(errs, field.Invalid(spec.Child(n.field), n.value, msg))
		}
	}
	uids := []struct{ field, value string }{
		{"podUID", string(s.PodUID)}, {"serviceAccountUID", string(s.ServiceAccountUID)}, {"nodeUID", string(s.NodeUID)},
	}
	for _, u := range uids {
		switch {
		case u.value == "":
			errs = append(errs, field.Invalid(spec.Child(u.field), u.value, "must not be empty"))
		case len(u.value) > 128:
			errs = append(errs, field.TooLong(spec.Child(u.field), u.value, 128))
		}
	}
	return errs
}

// validateMaxExpiration: 1 hour to 91 days, 24 hours at most for the
// Kubernetes project's own signers.
func validateMaxExpiration(signer string, v int32, p *field.Path) field.ErrorList {
	lo, hi := int32(registry.MinPodCertExpirationSeconds), int32(registry.MaxPodCertExpirationSeconds)
	if registry.IsKubernetesSignerName(signer) {
		hi = registry.MaxKubernetesPodCertExpirationSeconds
	}
	if v < lo || v > hi {
		return field.ErrorList{field.Invalid(p, v, rangeMsg(lo, hi))}
	}
	return nil
}

func rangeMsg(lo, hi int32) string { return fmt.Sprintf("must be in the range [%d, %d]", lo, hi) }

// pcrTerminal reports the terminal condition type of r ("" if none).
func pcrTerminal(r *certificatesv1.PodCertificateRequest) string {
	for _, c := range r.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			return c.Type
		}
	}
	return ""
}

// statusUnchanged is upstream's validateSemanticEquality of the status.
func statusUnchanged(a, b certificatesv1.PodCertificateRequestStatus, detail string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(a, b) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("status"), field.OmitValueType{}, detail)}
}
