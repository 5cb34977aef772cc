package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/orch/orch/server/auth"
)

// RuleAllows reports whether rule allows the request a.
func RuleAllows(a auth.Attributes, rule *rbacv1.PolicyRule) bool {
	if !a.IsResource {
		return matchesAny(rule.Verbs, a.Verb) && nonResourceURLMatches(rule.NonResourceURLs, a.Path)
	}
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	return matchesAny(rule.Verbs, a.Verb) &&
		matchesAny(rule.APIGroups, a.APIGroup) &&
		resourceMatches(rule.Resources, resource, a.Subresource) &&
		(len(rule.ResourceNames) == 0 || contains(rule.ResourceNames, a.Name))
}

// RulesAllow reports whether any of rules allows a.
func RulesAllow(a auth.Attributes, rules ...rbacv1.PolicyRule) bool {
	for i := range rules {
		if RuleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

// matchesAny: v is in list, or list holds "*".
func matchesAny(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// resourceMatches: "*", the exact resource[/subresource], or "*/<sub>".
func resourceMatches(rules []string, combined, sub string) bool {
	for _, r := range rules {
		switch {
		case r == "*", r == combined:
			return true
		case sub != "" && r == "*/"+sub:
			return true
		}
	}
	return false
}

// nonResourceURLMatches: "*", the exact path, or a prefix ending in "*".
func nonResourceURLMatches(rules []string, path string) bool {
	for _, r := range rules {
		switch {
		case r == "*", r == path:
			return true
		case strings.HasSuffix(r, "*") && strings.HasPrefix(path, strings.TrimRight(r, "*")):
			return true
		}
	}
	return false
}
