package reviews

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry"
)

// RulesResolver lists the RBAC rules a user holds in a namespace (and
// cluster-wide), for SelfSubjectRulesReview.
type RulesResolver interface {
	RulesFor(u *auth.User, namespace string) ([]rbacv1.PolicyRule, []error)
}

// Authorization returns authorization.k8s.io/v1 SubjectAccessReview,
// LocalSubjectAccessReview, SelfSubjectAccessReview and
// SelfSubjectRulesReview, answered by authz (the API server's whole
// authorizer) and rules.
func Authorization(authz auth.Authorizer, rules RulesResolver) []apiserver.Virtual {
	gv := authorizationv1.SchemeGroupVersion
	def := func(resource, kind string, namespaced bool, n func() runtime.Object) *registry.Resource {
		return virtual(registry.Def{GroupVersion: gv, Resource: resource, Kind: kind, Namespaced: namespaced, New: n, NewList: n})
	}
	return []apiserver.Virtual{
		{Resource: def("subjectaccessreviews", "SubjectAccessReview", false, registry.NewObjects[authorizationv1.SubjectAccessReview]()),
			Create: subjectAccessReview(authz)},
		{Resource: def("localsubjectaccessreviews", "LocalSubjectAccessReview", true, registry.NewObjects[authorizationv1.LocalSubjectAccessReview]()),
			Create: localSubjectAccessReview(authz)},
		{Resource: def("selfsubjectaccessreviews", "SelfSubjectAccessReview", false, registry.NewObjects[authorizationv1.SelfSubjectAccessReview]()),
			Create: selfSubjectAccessReview(authz)},
		{Resource: def("selfsubjectrulesreviews", "SelfSubjectRulesReview", false, registry.NewObjects[authorizationv1.SelfSubjectRulesReview]()),
			Create: selfSubjectRulesReview(rules)},
	}
}

func subjectAccessReview(authz auth.Authorizer) apiserver.VirtualCreate {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		sar := obj.(*authorizationv1.SubjectAccessReview).DeepCopy()
		if errs := validateSARSpec(sar.Spec); len(errs) > 0 {
			return nil, apierrors.NewInvalid(authorizationv1.SchemeGroupVersion.WithKind("SubjectAccessReview").GroupKind(), "", errs)
		}
		sar.Status = decide(ctx, authz, specUser(sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
		return sar, nil
	}
}

func localSubjectAccessReview(authz auth.Authorizer) apiserver.VirtualCreate {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		lsar := obj.(*authorizationv1.LocalSubjectAccessReview).DeepCopy()
		gk := authorizationv1.SchemeGroupVersion.WithKind("LocalSubjectAccessReview").GroupKind()
		errs := validateSARSpec(lsar.Spec)
		switch {
		case lsar.Spec.ResourceAttributes == nil:
			errs = append(errs, field.Invalid(field.NewPath("spec", "nonResourceAttributes"), lsar.Spec.NonResourceAttributes,
				"disallowed on this kind of request"))
		case lsar.Spec.ResourceAttributes.Namespace != lsar.Namespace:
			errs = append(errs, field.Invalid(field.NewPath("spec", "resourceAttributes", "namespace"),
				lsar.Spec.ResourceAttributes.Namespace, "must match metadata.namespace"))
		}
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(gk, "", errs)
		}
		lsar.Status = decide(ctx, authz, specUser(lsar.Spec), lsar.Spec.ResourceAttributes, nil)
		return lsar, nil
	}
}

func selfSubjectAccessReview(authz auth.Authorizer) apiserver.VirtualCreate {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		ssar := obj.(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		s := ssar.Spec
		if (s.ResourceAttributes == nil) == (s.NonResourceAttributes == nil) {
			return nil, apierrors.NewInvalid(authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectAccessReview").GroupKind(), "",
				field.ErrorList{field.Invalid(field.NewPath("spec", "resourceAttributes"), s.ResourceAttributes,
					"exactly one of nonResourceAttributes or resourceAttributes must be specified")})
		}
		u, ok := auth.UserFrom(ctx)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("no user in the request context"))
		}
		ssar.Status = decide(ctx, authz, u, s.ResourceAttributes, s.NonResourceAttributes)
		return ssar, nil
	}
}

// validateSARSpec checks what SubjectAccessReview and its local form share.
func validateSARSpec(s authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	var errs field.ErrorList
	if (s.ResourceAttributes == nil) == (s.NonResourceAttributes == nil) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "resourceAttributes"), s.ResourceAttributes,
			"exactly one of nonResourceAttributes or resourceAttributes must be specified"))
	}
	if s.User == "" && len(s.Groups) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "user"), s.User, "at least one of user or group must be specified"))
	}
	return errs
}

func specUser(s authorizationv1.SubjectAccessReviewSpec) *auth.User {
	u := &auth.User{Name: s.User, UID: s.UID, Groups: append([]string(nil), s.Groups...)}
	if len(s.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range s.Extra {
			u.Extra[k] = append([]string(nil), v...)
		}
	}
	return u
}

// decide asks authz about one set of attributes.
func decide(ctx context.Context, authz auth.Authorizer, u *auth.User, ra *authorizationv1.ResourceAttributes,
	nra *authorizationv1.NonResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
	a := auth.Attributes{User: u}
	if ra != nil {
		a.IsResource, a.Verb, a.Namespace, a.APIGroup = true, ra.Verb, ra.Namespace, ra.Group
		a.Resource, a.Subresource, a.Name = ra.Resource, ra.Subresource, ra.Name
	} else {
		a.Verb, a.Path = nra.Verb, nra.Path
	}
	allowed, reason, err := authz.Authorize(ctx, a)
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: allowed, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

func selfSubjectRulesReview(rules RulesResolver) apiserver.VirtualCreate {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		ssrr := obj.(*authorizationv1.SelfSubjectRulesReview).DeepCopy()
		u, ok := auth.UserFrom(ctx)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("no user in the request context"))
		}
		held, errs := rules.RulesFor(u, ssrr.Spec.Namespace)
		st := authorizationv1.SubjectRulesReviewStatus{ResourceRules: []authorizationv1.ResourceRule{},
			NonResourceRules: []authorizationv1.NonResourceRule{}}
		for _, r := range held {
			if len(r.NonResourceURLs) > 0 {
				st.NonResourceRules = append(st.NonResourceRules, authorizationv1.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
				continue
			}
			st.ResourceRules = append(st.ResourceRules, authorizationv1.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups,
				Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(errs) > 0 {
			st.EvaluationError = joinErrs(errs)
		}
		// The node authorizer's grants are not rules: nodes see an
		// incomplete list, as upstream's node authorizer reports.
		st.Incomplete = len(errs) > 0 || slices.Contains(u.Groups, auth.GroupNodes)
		ssrr.Status = st
		return ssrr, nil
	}
}

func joinErrs(errs []error) string {
	s := make([]string, len(errs))
	for i, e := range errs {
		s[i] = e.Error()
	}
	return strings.Join(s, ", ")
}
