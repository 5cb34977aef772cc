package certificates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
)

// mirrorPodAnnotation marks static pods' mirrors, which get no pod
// certificates.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// PCRNodeRestriction is the PodCertificateRequest part of upstream's
// NodeRestriction plug-in: what a node creates is checked against the
// stored Node, Pod and ServiceAccount.
type PCRNodeRestriction struct {
	store datastore.Store
	authz auth.Authorizer
}

var _ admission.Validator = PCRNodeRestriction{}

// NewPCRNodeRestriction reads the objects from store and asks authz
// whether a node may request a signer its pod does not name.
func NewPCRNodeRestriction(store datastore.Store, authz auth.Authorizer) PCRNodeRestriction {
	return PCRNodeRestriction{store: store, authz: authz}
}

func (PCRNodeRestriction) Name() string                        { return "NodeRestriction" }
func (PCRNodeRestriction) Handles(op admission.Operation) bool { return true }

// Validate applies only to nodes (system:node:<name> in system:nodes).
func (p PCRNodeRestriction) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource() != pcrResource || a.User == nil {
		return nil
	}
	node, ok := nodeOf(a.User)
	if !ok {
		return nil
	}
	switch {
	case a.Operation != admission.Create:
		return forbid(a, fmt.Errorf("unexpected operation %v", a.Operation))
	case a.Subresource != "":
		return forbid(a, fmt.Errorf("unexpected subresource %v", a.Subresource))
	}
	r, ok := a.Object.(*certificatesv1.PodCertificateRequest)
	if !ok {
		return forbid(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	if string(r.Spec.NodeName) != node {
		return forbid(a, fmt.Errorf("PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", r.Spec.NodeName, node))
	}
	pod, err := p.checkSubjects(ctx, a, r)
	if err != nil {
		return err
	}
	return p.checkSigner(ctx, a, pod, r)
}

// checkSubjects cross-checks the node, pod and service account of r with
// the stored objects. Mismatched UIDs are not Forbidden: upstream reads
// informers that may lag, and a retry may succeed.
func (p PCRNodeRestriction) checkSubjects(ctx context.Context, a *admission.Attributes, r *certificatesv1.PodCertificateRequest) (*corev1.Pod, error) {
	ns, s := a.Namespace, &r.Spec
	n, err := get[corev1.Node](ctx, p.store, "/registry/nodes/"+string(s.NodeName))
	if err != nil {
		return nil, lookupErr(a, fmt.Sprintf("node %q", s.NodeName), err)
	}
	if n.UID != s.NodeUID {
		return nil, retryable(fmt.Errorf("PodCertificateRequest for pod %q names node UID %q, inconsistent with the running node (%q)", ns+"/"+s.PodName, s.NodeUID, n.UID))
	}
	pod, err := get[corev1.Pod](ctx, p.store, "/registry/pods/"+ns+"/"+s.PodName)
	if err != nil {
		return nil, lookupErr(a, fmt.Sprintf("pod %q", ns+"/"+s.PodName), err)
	}
	switch _, mirror := pod.Annotations[mirrorPodAnnotation]; {
	case pod.UID != s.PodUID:
		return nil, retryable(fmt.Errorf("PodCertificateRequest for pod %q contains pod UID (%q) which differs from running pod %q", ns+"/"+s.PodName, s.PodUID, pod.UID))
	case pod.Spec.NodeName != string(s.NodeName):
		return nil, forbid(a, fmt.Errorf("pod %q is not running on node %q named in the PodCertificateRequest", ns+"/"+s.PodName, s.NodeName))
	case mirror:
		return nil, forbid(a, fmt.Errorf("pod %q is a mirror pod", ns+"/"+s.PodName))
	case pod.Spec.ServiceAccountName != s.ServiceAccountName:
		return nil, forbid(a, fmt.Errorf("PodCertificateRequest for pod %q contains serviceAccountName (%q) that differs from running pod (%q)", ns+"/"+s.PodName, s.ServiceAccountName, pod.Spec.ServiceAccountName))
	}
	sa, err := get[corev1.ServiceAccount](ctx, p.store, "/registry/serviceaccounts/"+ns+"/"+s.ServiceAccountName)
	if err != nil {
		return nil, lookupErr(a, fmt.Sprintf("service account %q", ns+"/"+s.ServiceAccountName), err)
	}
	if sa.UID != s.ServiceAccountUID {
		return nil, retryable(fmt.Errorf("PodCertificateRequest for pod %q names service account UID %q, which differs from the running service account (%q)", ns+"/"+s.PodName, s.ServiceAccountUID, sa.UID))
	}
	return pod, nil
}

// checkSigner: the pod mounts a podCertificate volume for the signer, or
// the node may request-serviceaccounts-podcertificate-signer on
// <signer with '/' as ':'> for the service account.
func (p PCRNodeRestriction) checkSigner(ctx context.Context, a *admission.Attributes, pod *corev1.Pod, r *certificatesv1.PodCertificateRequest) error {
	if PodNamesSigner(pod, r.Spec.SignerName) {
		return nil
	}
	ok, _, err := p.authz.Authorize(ctx, auth.Attributes{User: a.User, Verb: "request-serviceaccounts-podcertificate-signer",
		APIGroup: certificatesv1.GroupName, Resource: strings.ReplaceAll(r.Spec.SignerName, "/", ":"),
		Namespace: a.Namespace, Name: r.Spec.ServiceAccountName, IsResource: true})
	switch {
	case ok:
		return nil
	case err != nil:
		return forbid(a, fmt.Errorf("error authorizing %s to request podcertificaterequests for signer %q: %w", a.User.Name, r.Spec.SignerName, err))
	}
	return forbid(a, fmt.Errorf("pod %q does not mount a podCertificate projected volume for signer %q", a.Namespace+"/"+r.Spec.PodName, r.Spec.SignerName))
}

// PodNamesSigner reports whether a projected volume of pod has a
// podCertificate source for signer.
func PodNamesSigner(pod *corev1.Pod, signer string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.PodCertificate != nil && s.PodCertificate.SignerName == signer {
				return true
			}
		}
	}
	return false
}

// nodeOf returns the node of a system:node:<name> user in system:nodes.
func nodeOf(u *auth.User) (string, bool) {
	if !strings.HasPrefix(u.Name, auth.NodeUserPrefix) {
		return "", false
	}
	for _, g := range u.Groups {
		if g == auth.GroupNodes {
			return strings.TrimPrefix(u.Name, auth.NodeUserPrefix), true
		}
	}
	return "", false
}

func forbid(a *admission.Attributes, err error) error {
	return apierrors.NewForbidden(pcrResource, a.Name, err)
}

// retryable is upstream's plain error for what informer lag may explain
// (the API answers 500).
func retryable(err error) error { return apierrors.NewInternalError(err) }

// lookupErr: a missing object may appear on retry; other errors are
// Forbidden, as upstream.
func lookupErr(a *admission.Attributes, what string, err error) error {
	err = fmt.Errorf("while retrieving %s named in the PodCertificateRequest: %w", what, err)
	if errors.Is(err, datastore.ErrNotFound) {
		return retryable(err)
	}
	return forbid(a, err)
}

// get reads and decodes one stored object.
func get[T any](ctx context.Context, st datastore.Store, key string) (*T, error) {
	kv, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	obj := new(T)
	if err := json.Unmarshal(kv.Value, obj); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", key, err)
	}
	return obj, nil
}
