package rbac

import (
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/orch/orch/server/auth"
)

// serviceAccountPrefix starts the user name of a ServiceAccount token.
const serviceAccountPrefix = "system:serviceaccount:"

// Resolver finds the rules bound to a user.
type Resolver struct {
	L Lister
}

// Visitor sees each rule that applies (source describes the binding) or an
// error met on the way; it returns false to stop.
type Visitor func(source string, rule *rbacv1.PolicyRule, err error) bool

// VisitRulesFor calls visit with every rule bound to u cluster-wide and, if
// namespace is set, in that namespace, as upstream's
// DefaultRuleResolver.VisitRulesFor does.
func (r *Resolver) VisitRulesFor(u *auth.User, namespace string, visit Visitor) {
	crbs, err := r.L.ListClusterRoleBindings()
	if err != nil {
		visit("", nil, err)
		return
	}
	for _, b := range crbs {
		if !appliesTo(u, b.Subjects, "") {
			continue
		}
		src := fmt.Sprintf("ClusterRoleBinding %q of ClusterRole %q", b.Name, b.RoleRef.Name)
		if !r.visitRole(b.RoleRef, "", src, visit) {
			return
		}
	}
	if namespace == "" {
		return
	}
	rbs, err := r.L.ListRoleBindings(namespace)
	if err != nil {
		visit("", nil, err)
		return
	}
	for _, b := range rbs {
		if !appliesTo(u, b.Subjects, namespace) {
			continue
		}
		src := fmt.Sprintf("RoleBinding %q of %s %q in namespace %q", b.Name, b.RoleRef.Kind, b.RoleRef.Name, namespace)
		if !r.visitRole(b.RoleRef, namespace, src, visit) {
			return
		}
	}
}

// visitRole visits the rules of ref; false means the visitor stopped.
func (r *Resolver) visitRole(ref rbacv1.RoleRef, namespace, src string, visit Visitor) bool {
	rules, err := r.RoleRules(ref, namespace)
	if err != nil {
		return visit(src, nil, err)
	}
	for i := range rules {
		if !visit(src, &rules[i], nil) {
			return false
		}
	}
	return true
}

// RoleRules returns the rules of the Role or ClusterRole ref points at.
func (r *Resolver) RoleRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "ClusterRole":
		cr, err := r.L.GetClusterRole(ref.Name)
		if err != nil {
			return nil, err
		}
		return cr.Rules, nil
	case "Role":
		role, err := r.L.GetRole(namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// RulesFor returns every rule bound to u in namespace (and cluster-wide),
// and the errors met (a binding to a missing role, say).
func (r *Resolver) RulesFor(u *auth.User, namespace string) ([]rbacv1.PolicyRule, []error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	r.VisitRulesFor(u, namespace, func(_ string, rule *rbacv1.PolicyRule, err error) bool {
		if rule != nil {
			rules = append(rules, *rule)
		}
		if err != nil {
			errs = append(errs, err)
		}
		return true
	})
	return rules, errs
}

// appliesTo reports whether one of subjects names u; namespace is the
// binding's (ServiceAccount subjects default to it).
func appliesTo(u *auth.User, subjects []rbacv1.Subject, namespace string) bool {
	for _, s := range subjects {
		if subjectMatches(u, s, namespace) {
			return true
		}
	}
	return false
}

func subjectMatches(u *auth.User, s rbacv1.Subject, namespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return u.Name == s.Name
	case rbacv1.GroupKind:
		return slices.Contains(u.Groups, s.Name)
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = namespace
		}
		return ns != "" && u.Name == serviceAccountPrefix+ns+":"+s.Name
	}
	return false
}
