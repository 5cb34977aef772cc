package apiserver

import (
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/auth/satoken"
)

// TokenIssuer signs ServiceAccount tokens (satoken.Issuer).
type TokenIssuer interface {
	Issue(req satoken.Request) (string, time.Time, error)
}

var (
	serviceAccountsGR = schema.GroupResource{Resource: "serviceaccounts"}
	tokenRequestGVK   = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")
	podsRes           = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	secretsRes        = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// Upstream's bounds of TokenRequest.spec.expirationSeconds.
const (
	minTokenSeconds     = 600
	defaultTokenSeconds = 3600
	maxTokenSeconds     = 1 << 32 // int64: an int constant would not fit 32-bit ARM
)

// handleTokenRequest serves POST serviceaccounts/<name>/token (TokenRequest):
// a JWT for the ServiceAccount, optionally bound to a Pod or Secret of its
// namespace, that stops authenticating once the bound object or the
// ServiceAccount is gone.
func (s *Server) handleTokenRequest(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	if s.cfg.TokenIssuer == nil {
		s.writeError(w, r, apierrors.NewServiceUnavailable("service account tokens are not configured"))
		return
	}
	body, err := s.decodeRequest(w, r, rc, tokenRequestGVK)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	tr := body.(*authenticationv1.TokenRequest)
	if err := validateTokenRequest(tr); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.issueToken(r, rc, tr)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, out)
}

func validateTokenRequest(tr *authenticationv1.TokenRequest) error {
	if tr.Spec.ExpirationSeconds == nil {
		v := int64(defaultTokenSeconds)
		tr.Spec.ExpirationSeconds = &v
	}
	p := field.NewPath("spec")
	var errs field.ErrorList
	if e := *tr.Spec.ExpirationSeconds; e < minTokenSeconds {
		errs = append(errs, field.Invalid(p.Child("expirationSeconds"), e, "may not specify a duration less than 10 minutes"))
	} else if e > maxTokenSeconds {
		errs = append(errs, field.Invalid(p.Child("expirationSeconds"), e, "may not specify a duration larger than 2^32 seconds"))
	}
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		rp := p.Child("boundObjectRef")
		switch {
		case ref.Kind != "Pod" && ref.Kind != "Secret":
			errs = append(errs, field.NotSupported(rp.Child("kind"), ref.Kind, []string{"Pod", "Secret"}))
		case ref.APIVersion != "v1":
			errs = append(errs, field.Invalid(rp.Child("apiVersion"), ref.APIVersion, "must be v1"))
		case ref.Name == "":
			errs = append(errs, field.Required(rp.Child("name"), ""))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(tokenRequestGVK.GroupKind(), "", errs)
	}
	return nil
}

// issueToken checks the ServiceAccount and bound object, then signs.
func (s *Server) issueToken(r *http.Request, rc *reqCtx, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	ctx := r.Context()
	cur, _, err := s.getStored(ctx, rc.res, rc.ns, rc.name)
	if err != nil {
		return nil, err
	}
	sa := cur.(*corev1.ServiceAccount)
	req := satoken.Request{Namespace: rc.ns, ServiceAccount: satoken.Ref{Name: sa.Name, UID: string(sa.UID)},
		Audiences: tr.Spec.Audiences, Expiration: time.Duration(*tr.Spec.ExpirationSeconds) * time.Second}
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		bound, obj, err := s.boundRef(r, rc.ns, ref)
		if err != nil {
			return nil, err
		}
		if pod, ok := obj.(*corev1.Pod); ok {
			req.Pod = bound
			if req.Node, err = s.podNodeRef(r, pod); err != nil {
				return nil, err
			}
		} else {
			req.Secret = bound
		}
	}
	tok, exp, err := s.cfg.TokenIssuer.Issue(req)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("issuing token: %w", err))
	}
	out := tr.DeepCopy()
	out.TypeMeta = metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"}
	out.Name, out.Namespace, out.CreationTimestamp = sa.Name, rc.ns, metav1.Now()
	if len(out.Spec.Audiences) == 0 {
		out.Spec.Audiences = s.cfg.APIAudiences
	}
	out.Status = authenticationv1.TokenRequestStatus{Token: tok, ExpirationTimestamp: metav1.NewTime(exp)}
	return out, nil
}

// podNodeRef is the node a pod-bound token names, as upstream's
// ServiceAccountTokenPodNodeInfo: the pod's node, with only its name when
// the Node object does not exist; nil for a pod not yet scheduled.
func (s *Server) podNodeRef(r *http.Request, pod *corev1.Pod) (*satoken.Ref, error) {
	name := pod.Spec.NodeName
	nodes := s.byGVR[corev1.SchemeGroupVersion.WithResource("nodes")]
	if name == "" || nodes == nil {
		return nil, nil
	}
	nobj, _, err := s.getStored(r.Context(), nodes, "", name)
	switch {
	case apierrors.IsNotFound(err):
		return &satoken.Ref{Name: name}, nil
	case err != nil:
		return nil, apierrors.NewInternalError(err)
	}
	return &satoken.Ref{Name: name, UID: string(objectMeta(nobj).GetUID())}, nil
}

// boundRef reads the Pod or Secret a token is to be bound to; its uid must
// match when the request gives one.
func (s *Server) boundRef(r *http.Request, ns string, ref *authenticationv1.BoundObjectReference) (*satoken.Ref, runtime.Object, error) {
	gvr := podsRes
	if ref.Kind == "Secret" {
		gvr = secretsRes
	}
	res := s.byGVR[gvr]
	if res == nil {
		return nil, nil, apierrors.NewNotFound(gvr.GroupResource(), ref.Name)
	}
	obj, _, err := s.getStored(r.Context(), res, ns, ref.Name)
	if err != nil {
		return nil, nil, err
	}
	m := objectMeta(obj)
	if ref.UID != "" && ref.UID != m.GetUID() {
		return nil, nil, apierrors.NewConflict(gvr.GroupResource(), ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return &satoken.Ref{Name: m.GetName(), UID: string(m.GetUID())}, obj, nil
}
