package apf

import (
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/orch/orch/server/auth"
)

// saPrefix is the user name prefix of ServiceAccounts.
const saPrefix = "system:serviceaccount:"

// matches reports whether a request is in fs: one of its rules matches.
func matches(fs *flowcontrolv1.FlowSchema, a *auth.Attributes) bool {
	for i := range fs.Spec.Rules {
		if matchesRule(&fs.Spec.Rules[i], a) {
			return true
		}
	}
	return false
}

// matchesRule: a subject matches the user and, for the kind of request, a
// resource or non-resource rule matches it.
func matchesRule(r *flowcontrolv1.PolicyRulesWithSubjects, a *auth.Attributes) bool {
	if !slices.ContainsFunc(r.Subjects, func(s flowcontrolv1.Subject) bool { return matchesSubject(s, a.User) }) {
		return false
	}
	if a.IsResource {
		return slices.ContainsFunc(r.ResourceRules, func(rr flowcontrolv1.ResourcePolicyRule) bool { return matchesResourceRule(rr, a) })
	}
	return slices.ContainsFunc(r.NonResourceRules, func(nr flowcontrolv1.NonResourcePolicyRule) bool {
		return contains(nr.Verbs, a.Verb, flowcontrolv1.VerbAll) && matchesURL(nr.NonResourceURLs, a.Path)
	})
}

func matchesSubject(s flowcontrolv1.Subject, u *auth.User) bool {
	if u == nil {
		return false
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == u.Name)
	case flowcontrolv1.SubjectKindGroup:
		return s.Group != nil && (s.Group.Name == flowcontrolv1.NameAll || slices.Contains(u.Groups, s.Group.Name))
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		ns, name, ok := strings.Cut(strings.TrimPrefix(u.Name, saPrefix), ":")
		if !ok || !strings.HasPrefix(u.Name, saPrefix) || ns != s.ServiceAccount.Namespace {
			return false
		}
		return s.ServiceAccount.Name == flowcontrolv1.NameAll || s.ServiceAccount.Name == name
	}
	return false
}

func matchesResourceRule(r flowcontrolv1.ResourcePolicyRule, a *auth.Attributes) bool {
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if !contains(r.Verbs, a.Verb, flowcontrolv1.VerbAll) || !contains(r.Resources, res, flowcontrolv1.ResourceAll) ||
		!contains(r.APIGroups, a.APIGroup, flowcontrolv1.APIGroupAll) {
		return false
	}
	if a.Namespace == "" {
		return r.ClusterScope
	}
	return contains(r.Namespaces, a.Namespace, flowcontrolv1.NamespaceEvery)
}

// matchesURL: "*", the path itself, or a prefix: "/a" and "/a/*" both
// match "/a/b".
func matchesURL(urls []string, path string) bool {
	for _, u := range urls {
		if u == flowcontrolv1.NonResourceAll || u == path {
			return true
		}
		prefix := strings.TrimSuffix(u, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// contains is upstream's containsString: a list of only the wildcard
// matches everything, otherwise x must be listed.
func contains(list []string, x, wildcard string) bool {
	return (len(list) == 1 && list[0] == wildcard) || slices.Contains(list, x)
}
