package certificates

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
)

var (
	ctbResource = schema.GroupResource{Group: certificatesv1.GroupName, Resource: "clustertrustbundles"}
	pcrResource = schema.GroupResource{Group: certificatesv1.GroupName, Resource: "podcertificaterequests"}
)

// Attest is the ClusterTrustBundleAttest plug-in.
type Attest struct{ authz auth.Authorizer }

// PCRSigning is the PodCertificateRequestSigning plug-in.
type PCRSigning struct{ authz auth.Authorizer }

var (
	_ admission.Validator = Attest{}
	_ admission.Validator = PCRSigning{}
)

// NewAttest and NewPCRSigning check signer permissions with authz.
func NewAttest(authz auth.Authorizer) Attest         { return Attest{authz} }
func NewPCRSigning(authz auth.Authorizer) PCRSigning { return PCRSigning{authz} }

func (Attest) Name() string     { return "ClusterTrustBundleAttest" }
func (PCRSigning) Name() string { return "PodCertificateRequestSigning" }

func (Attest) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}
func (PCRSigning) Handles(op admission.Operation) bool { return op == admission.Update }

// Validate: a bundle that names a signer needs attest on it. The new
// object's signer counts (validation refuses changing it); updates that
// touch only what the garbage collector writes are let through.
func (p Attest) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource() != ctbResource || a.Subresource != "" {
		return nil
	}
	b, ok := a.Object.(*certificatesv1.ClusterTrustBundle)
	if !ok {
		return apierrors.NewForbidden(ctbResource, a.Name, fmt.Errorf("expected type ClusterTrustBundle, got: %T", a.Object))
	}
	if b.Spec.SignerName == "" || (a.Operation == admission.Update && onlyGCFields(a.Object, a.OldObject)) {
		return nil
	}
	if a.User == nil || !SignerAllowed(ctx, p.authz, a.User, "attest", b.Spec.SignerName) {
		return apierrors.NewForbidden(ctbResource, a.Name, fmt.Errorf("user not permitted to attest for signerName %q", b.Spec.SignerName))
	}
	return nil
}

// onlyGCFields is upstream's IsOnlyMutatingGCFields: obj differs from old
// in owner references, finalizers and managed fields at most.
func onlyGCFields(obj, old runtime.Object) bool {
	if old == nil {
		return false
	}
	cp := obj.DeepCopyObject()
	cm, err1 := meta.Accessor(cp)
	om, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetManagedFields(om.GetManagedFields())
	return apiequality.Semantic.DeepEqual(cp, old)
}

// Validate: a status update that changes the status needs sign on the
// stored request's signer.
func (p PCRSigning) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource() != pcrResource || a.Subresource != "status" {
		return nil
	}
	r, _ := a.Object.(*certificatesv1.PodCertificateRequest)
	old, _ := a.OldObject.(*certificatesv1.PodCertificateRequest)
	switch {
	case r == nil || old == nil:
		return apierrors.NewForbidden(pcrResource, a.Name, fmt.Errorf("expected type PodCertificateRequest, got: %T", a.Object))
	case apiequality.Semantic.DeepEqual(r.Status, old.Status):
		return nil
	}
	signer := old.Spec.SignerName
	if a.User == nil || !SignerAllowed(ctx, p.authz, a.User, "sign", signer) {
		name := ""
		if a.User != nil {
			name = a.User.Name
		}
		return apierrors.NewForbidden(pcrResource, a.Name, fmt.Errorf("User %q is not permitted to \"sign\" for signer %q", name, signer))
	}
	return nil
}
