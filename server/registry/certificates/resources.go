package certificates

import (
	"context"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry"
)

// Group is this package's resources for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: "certificates", Resources: resources, AddToScheme: func(s *runtime.Scheme) error {
		utilruntime.Must(certificatesv1.AddToScheme(s))
		return nil
	}}
}

func csrOf(o runtime.Object) *certificatesv1.CertificateSigningRequest {
	return o.(*certificatesv1.CertificateSigningRequest)
}

func resources(registry.Config) []*registry.Resource {
	return registry.BuildAll(csrs(), clusterTrustBundles(), podCertificateRequests())
}

func csrs() registry.Def {
	return registry.Def{GroupVersion: certificatesv1.SchemeGroupVersion, Resource: "certificatesigningrequests",
		Kind: "CertificateSigningRequest", ShortNames: []string{"csr"}, HasStatus: true,
		New:          registry.NewObjects[certificatesv1.CertificateSigningRequest](),
		NewList:      registry.NewObjects[certificatesv1.CertificateSigningRequestList](),
		Subresources: map[string]registry.SubresourceStrategy{"approval": approval{}},
		Hooks: registry.Hooks{
			// Any name that is a path segment, as upstream (kubelets name
			// theirs node-csr-<base64url>).
			NameFn:           func(string, bool) []string { return nil },
			PrepareCreateCtx: prepareCreate,
			PrepareUpdate: func(o, old runtime.Object) {
				csrOf(o).Spec, csrOf(o).Status = csrOf(old).Spec, csrOf(old).Status
			},
			Validate:       func(o runtime.Object) field.ErrorList { return validateCreate(csrOf(o)) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList { return validateUpdate(csrOf(o), csrOf(old)) },
			PrepareStatus:  prepareStatus,
			ValidateStatus: func(o, old runtime.Object) field.ErrorList { return validateUpdate(csrOf(o), csrOf(old)) },
			Fields:         func(o runtime.Object, set fields.Set) { set["spec.signerName"] = csrOf(o).Spec.SignerName },
			Columns: []metav1.TableColumnDefinition{
				registry.AgeColumn(),
				registry.Col("SignerName", "string", 0, "The name of the signer"),
				registry.Col("Requestor", "string", 0, "Name of the user who created the request"),
				registry.Col("RequestedDuration", "string", 0, "Requested duration of the certificate"),
				registry.Col("Condition", "string", 0, "The state of the request"),
			},
			Row: row,
		}}
}

// prepareCreate writes the requester's identity into the spec and clears
// the status: nobody creates a pre-approved request.
func prepareCreate(ctx context.Context, o runtime.Object) {
	c := csrOf(o)
	c.Spec.Username, c.Spec.UID, c.Spec.Groups, c.Spec.Extra = "", "", nil, nil
	if u, ok := auth.UserFrom(ctx); ok {
		c.Spec.Username, c.Spec.UID, c.Spec.Groups = u.Name, u.UID, u.Groups
		if len(u.Extra) > 0 {
			c.Spec.Extra = map[string]certificatesv1.ExtraValue{}
			for k, v := range u.Extra {
				c.Spec.Extra[k] = v
			}
		}
	}
	c.Status = certificatesv1.CertificateSigningRequestStatus{}
}

// prepareStatus: the status subresource sets the certificate and the
// non-approval conditions; Approved and Denied stay as they were.
func prepareStatus(o, old runtime.Object) {
	c, prev := csrOf(o), csrOf(old)
	c.Spec = prev.Spec
	c.Status.Conditions = stamp(merge(prev.Status.Conditions, c.Status.Conditions), prev.Status.Conditions)
}

// approval is the approval subresource: only the conditions change, all
// of them as upstream's csrApprovalStrategy (validation keeps an Approved
// or Denied condition from being removed).
type approval struct{}

func (approval) PrepareForUpdate(_ context.Context, o, old runtime.Object) {
	c, prev := csrOf(o), csrOf(old)
	conds := stamp(c.Status.Conditions, prev.Status.Conditions)
	c.Spec, c.Status = prev.Spec, prev.Status
	c.Status.Conditions = conds
}

func (approval) ValidateUpdate(_ context.Context, o, old runtime.Object) field.ErrorList {
	return append(validateMeta(csrOf(o), csrOf(old)), validateUpdate(csrOf(o), csrOf(old))...)
}

// validateMeta is the metadata validation the generic strategy gives the
// main resource and status (the approval subresource may change labels
// and annotations too). The API layer checks resourceVersion itself.
func validateMeta(c, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	p := field.NewPath("metadata")
	errs := apivalidation.ValidateObjectMetaAccessor(c, false, func(string, bool) []string { return nil }, p)
	for _, e := range apivalidation.ValidateObjectMetaAccessorUpdate(c, old, p) {
		if e.Field != "metadata.resourceVersion" {
			errs = append(errs, e)
		}
	}
	return errs
}

// merge is the Approved and Denied conditions of approvals followed by
// the other conditions of others.
func merge(approvals, others []certificatesv1.CertificateSigningRequestCondition) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, cd := range approvals {
		if isApproval(cd.Type) {
			out = append(out, cd)
		}
	}
	for _, cd := range others {
		if !isApproval(cd.Type) {
			out = append(out, cd)
		}
	}
	return out
}

func isApproval(t certificatesv1.RequestConditionType) bool {
	return t == certificatesv1.CertificateApproved || t == certificatesv1.CertificateDenied
}

// stamp sets lastUpdateTime and lastTransitionTime of new conditions (and
// of conditions whose status changed), as upstream's strategy does.
func stamp(conds, prev []certificatesv1.CertificateSigningRequestCondition) []certificatesv1.CertificateSigningRequestCondition {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for i := range conds {
		c := &conds[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, p := range prev {
			if p.Type == c.Type && p.Status == c.Status && !p.LastTransitionTime.IsZero() {
				c.LastTransitionTime = p.LastTransitionTime
			}
		}
	}
	return conds
}

func row(o runtime.Object) []interface{} {
	c := csrOf(o)
	dur := "<none>"
	if s := c.Spec.ExpirationSeconds; s != nil {
		dur = duration.HumanDuration(time.Duration(*s) * time.Second)
	}
	return []interface{}{registry.Age(o), c.Spec.SignerName, c.Spec.Username, dur, condition(c)}
}

// condition is kubectl's CONDITION: the condition types, then Issued
// when a certificate is there; Pending without either.
func condition(c *certificatesv1.CertificateSigningRequest) string {
	var parts []string
	for _, cd := range c.Status.Conditions {
		if cd.Status != "False" {
			parts = append(parts, string(cd.Type))
		}
	}
	if len(parts) == 0 {
		parts = []string{"Pending"}
	}
	if len(c.Status.Certificate) > 0 {
		parts = append(parts, "Issued")
	}
	return strings.Join(parts, ",")
}
