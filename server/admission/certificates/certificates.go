package certificates

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry/certificates"
)

var csrResource = schema.GroupResource{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests"}

// Approval is the CertificateApproval plug-in.
type Approval struct{ authz auth.Authorizer }

// Signing is the CertificateSigning plug-in.
type Signing struct{ authz auth.Authorizer }

// SubjectRestriction is the CertificateSubjectRestriction plug-in.
type SubjectRestriction struct{}

var (
	_ admission.Validator = Approval{}
	_ admission.Validator = Signing{}
	_ admission.Validator = SubjectRestriction{}
)

// NewApproval and NewSigning check signer permissions with authz.
func NewApproval(authz auth.Authorizer) Approval { return Approval{authz} }
func NewSigning(authz auth.Authorizer) Signing   { return Signing{authz} }

func (Approval) Name() string                        { return "CertificateApproval" }
func (Signing) Name() string                         { return "CertificateSigning" }
func (SubjectRestriction) Name() string              { return "CertificateSubjectRestriction" }
func (Approval) Handles(op admission.Operation) bool { return op == admission.Update }
func (Signing) Handles(op admission.Operation) bool  { return op == admission.Update }
func (SubjectRestriction) Handles(op admission.Operation) bool {
	return op == admission.Create
}

func csrs(a *admission.Attributes, sub string) (*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequest, bool) {
	if a.Resource.GroupResource() != csrResource || a.Subresource != sub {
		return nil, nil, false
	}
	c, _ := a.Object.(*certificatesv1.CertificateSigningRequest)
	old, _ := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	return c, old, true
}

// Validate: updates of the approval subresource need approve on the
// signer. The stored object's signer counts, as upstream: the body cannot
// name a signer its writer may approve for.
func (p Approval) Validate(ctx context.Context, a *admission.Attributes) error {
	_, old, ok := csrs(a, "approval")
	if !ok {
		return nil
	}
	if old == nil {
		return apierrors.NewForbidden(csrResource, a.Name, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	return allowedFor(ctx, p.authz, a.User, "approve", old)
}

// Validate: a status update that changes the certificate needs sign on
// the stored object's signer.
func (p Signing) Validate(ctx context.Context, a *admission.Attributes) error {
	c, old, ok := csrs(a, "status")
	switch {
	case !ok:
		return nil
	case c == nil || old == nil:
		return apierrors.NewForbidden(csrResource, a.Name, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	case bytes.Equal(old.Status.Certificate, c.Status.Certificate):
		return nil
	}
	return allowedFor(ctx, p.authz, a.User, "sign", old)
}

// Validate refuses kube-apiserver-client requests for system:masters.
func (SubjectRestriction) Validate(_ context.Context, a *admission.Attributes) error {
	c, _, ok := csrs(a, "")
	if !ok || c == nil || c.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	req, err := certificates.ParseRequest(c.Spec.Request)
	if err != nil {
		return apierrors.NewForbidden(csrResource, c.Name, fmt.Errorf("failed to parse CSR: %w", err))
	}
	if slices.Contains(req.Subject.Organization, auth.GroupMasters) {
		return apierrors.NewForbidden(csrResource, c.Name,
			fmt.Errorf("use of %s signer with system:masters group is not allowed", certificatesv1.KubeAPIServerClientSignerName))
	}
	return nil
}

// allowedFor checks verb on the request's signer (signers/<signer> or
// signers/<domain>/*).
func allowedFor(ctx context.Context, authz auth.Authorizer, u *auth.User, verb string, c *certificatesv1.CertificateSigningRequest) error {
	if u == nil {
		return apierrors.NewForbidden(csrResource, c.Name, fmt.Errorf("no user"))
	}
	if !SignerAllowed(ctx, authz, u, verb, c.Spec.SignerName) {
		return apierrors.NewForbidden(csrResource, c.Name, fmt.Errorf("user not permitted to %s requests with signerName %q", verb, c.Spec.SignerName))
	}
	return nil
}

// SignerAllowed is upstream's IsAuthorizedForSignerName: verb on
// certificates.k8s.io signers named <signer>, or <domain>/* for the
// signer's domain.
func SignerAllowed(ctx context.Context, authz auth.Authorizer, u *auth.User, verb, signer string) bool {
	names := []string{signer}
	if domain, _, ok := strings.Cut(signer, "/"); ok {
		names = append(names, domain+"/*")
	}
	for _, n := range names {
		ok, _, err := authz.Authorize(ctx, auth.Attributes{User: u, Verb: verb, APIGroup: certificatesv1.GroupName,
			Resource: "signers", Name: n, IsResource: true})
		if err == nil && ok {
			return true
		}
	}
	return false
}
