package rbacescalation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
)

// RuleResolver finds the rules a user holds and the rules a role grants.
type RuleResolver interface {
	RulesFor(u *auth.User, namespace string) ([]rbacv1.PolicyRule, []error)
	RoleRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error)
}

// Plugin is the escalation check.
type Plugin struct {
	authz auth.Authorizer
	rules RuleResolver
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plug-in; authz answers the escalate/bind checks.
func New(authz auth.Authorizer, rules RuleResolver) *Plugin {
	return &Plugin{authz: authz, rules: rules}
}

// Name implements admission.Named.
func (p *Plugin) Name() string { return "RBACEscalation" }

// Handles implements admission.Validator: creates and updates.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Group != rbacv1.GroupName || a.Subresource != "" || a.User == nil ||
		slices.Contains(a.User.Groups, auth.GroupMasters) {
		return nil
	}
	switch o := a.Object.(type) {
	case *rbacv1.Role:
		old, _ := a.OldObject.(*rbacv1.Role)
		if old != nil && equality.Semantic.DeepEqual(o.Rules, old.Rules) {
			return nil
		}
		return p.checkRole(ctx, a, "roles", o.Rules)
	case *rbacv1.ClusterRole:
		return p.checkClusterRole(ctx, a, o)
	case *rbacv1.RoleBinding:
		return p.checkBinding(ctx, a, o.RoleRef, a.Namespace)
	case *rbacv1.ClusterRoleBinding:
		return p.checkBinding(ctx, a, o.RoleRef, "")
	}
	return nil
}

func (p *Plugin) checkClusterRole(ctx context.Context, a *admission.Attributes, r *rbacv1.ClusterRole) error {
	old, _ := a.OldObject.(*rbacv1.ClusterRole)
	if old != nil && equality.Semantic.DeepEqual(r.Rules, old.Rules) &&
		equality.Semantic.DeepEqual(r.AggregationRule, old.AggregationRule) {
		return nil
	}
	if ok, err := p.allowed(ctx, a.User, "escalate", "clusterroles", "", a.Name); ok || err != nil {
		return err
	}
	if r.AggregationRule != nil || (old != nil && old.AggregationRule != nil) {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
			errors.New("must have cluster-admin privileges to use an aggregationRule"))
	}
	return p.confirmNoEscalation(a, "", r.Rules)
}

func (p *Plugin) checkRole(ctx context.Context, a *admission.Attributes, resource string, rules []rbacv1.PolicyRule) error {
	if ok, err := p.allowed(ctx, a.User, "escalate", resource, a.Namespace, a.Name); ok || err != nil {
		return err
	}
	return p.confirmNoEscalation(a, a.Namespace, rules)
}

// checkBinding allows a binding when the user may `bind` the role, else
// when they hold every rule the role grants.
func (p *Plugin) checkBinding(ctx context.Context, a *admission.Attributes, ref rbacv1.RoleRef, namespace string) error {
	if old := oldRef(a.OldObject); old != nil && *old == ref {
		return nil
	}
	resource := "clusterroles"
	if ref.Kind == "Role" {
		resource = "roles"
	}
	if ok, err := p.allowed(ctx, a.User, "bind", resource, namespace, ref.Name); ok || err != nil {
		return err
	}
	rules, err := p.rules.RoleRules(ref, namespace)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return apierrors.NewNotFound(rbacv1.Resource(resource), ref.Name)
		}
		return apierrors.NewInternalError(err)
	}
	return p.confirmNoEscalation(a, namespace, rules)
}

func oldRef(old any) *rbacv1.RoleRef {
	switch o := old.(type) {
	case *rbacv1.RoleBinding:
		return &o.RoleRef
	case *rbacv1.ClusterRoleBinding:
		return &o.RoleRef
	}
	return nil
}

func (p *Plugin) allowed(ctx context.Context, u *auth.User, verb, resource, namespace, name string) (bool, error) {
	ok, _, err := p.authz.Authorize(ctx, auth.Attributes{User: u, Verb: verb, APIGroup: rbacv1.GroupName,
		Resource: resource, Namespace: namespace, Name: name, IsResource: true})
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return ok, nil
}

// confirmNoEscalation is upstream's ConfirmNoEscalation: the user's own
// rules (cluster-wide plus namespace's) must cover rules.
func (p *Plugin) confirmNoEscalation(a *admission.Attributes, namespace string, rules []rbacv1.PolicyRule) error {
	owned, errs := p.rules.RulesFor(a.User, namespace)
	covered, missing := validation.Covers(owned, rules)
	if covered {
		return nil
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s",
		a.User.Name, a.User.Groups, compactRules(missing))
	if len(errs) > 0 {
		msg += fmt.Sprintf("; resolution errors: %v", errs)
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, errors.New(msg))
}

// compactRules renders rules one per line as upstream's message does.
func compactRules(rules []rbacv1.PolicyRule) string {
	lines := make([]string, 0, len(rules))
	for _, r := range rules {
		lines = append(lines, compact(r))
	}
	return strings.Join(lines, "\n")
}

// compact renders one rule like upstream's CompactString, e.g.
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}.
func compact(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(name string, vals []string) {
		if len(vals) == 0 {
			return
		}
		q := make([]string, len(vals))
		for i, v := range vals {
			q[i] = fmt.Sprintf("%q", v)
		}
		parts = append(parts, name+":["+strings.Join(q, ", ")+"]")
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("ResourceNames", r.ResourceNames)
	add("NonResourceURLs", r.NonResourceURLs)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}
