package rbac

import (
	"context"
	"errors"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/orch/orch/server/auth"
)

// Rule is the RBAC authorizer as an auth.Rule: Allow when a bound rule
// allows the request, else no opinion (the chain then denies).
func Rule(r *Resolver) auth.Rule {
	return func(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
		var allowedBy string
		var errs []error
		r.VisitRulesFor(a.User, a.Namespace, func(src string, rule *rbacv1.PolicyRule, err error) bool {
			if err != nil {
				errs = append(errs, err)
				return true
			}
			if RuleAllows(a, rule) {
				allowedBy = src
				return false
			}
			return true
		})
		if allowedBy != "" {
			return auth.Allow, "RBAC: allowed by " + allowedBy, nil
		}
		if errors.Is(errors.Join(errs...), ErrNotReady) {
			return auth.NoOpinion, ErrNotReady.Error(), nil
		}
		return auth.NoOpinion, "", nil
	}
}
