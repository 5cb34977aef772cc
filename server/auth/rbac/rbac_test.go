package rbac

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/server/auth"
)

func res(verb, group, resource, sub, ns, name string) auth.Attributes {
	return auth.Attributes{Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name, IsResource: true}
}

func TestRuleAllows(t *testing.T) {
	pods := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		a    auth.Attributes
		want bool
	}{
		{"exact", pods, res("get", "", "pods", "", "ns", "p"), true},
		{"other verb", pods, res("delete", "", "pods", "", "ns", "p"), false},
		{"other group", pods, res("get", "apps", "pods", "", "ns", "p"), false},
		{"subresource not implied", pods, res("get", "", "pods", "log", "ns", "p"), false},
		{"subresource named", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}},
			res("get", "", "pods", "log", "ns", "p"), true},
		{"*/subresource", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"*"}, Resources: []string{"*/status"}},
			res("update", "apps", "deployments", "status", "ns", "d"), true},
		{"*/subresource not the main resource", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"*"}, Resources: []string{"*/status"}},
			res("update", "apps", "deployments", "", "ns", "d"), false},
		{"star everything", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			res("deletecollection", "x.io", "things", "scale", "", ""), true},
		{"resourceNames match", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}},
			res("get", "", "configmaps", "", "ns", "a"), true},
		{"resourceNames miss", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}},
			res("get", "", "configmaps", "", "ns", "b"), false},
		{"resourceNames and list", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}},
			res("list", "", "configmaps", "", "ns", ""), false},
		{"url exact", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}},
			auth.Attributes{Verb: "get", Path: "/healthz"}, true},
		{"url prefix star", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}},
			auth.Attributes{Verb: "get", Path: "/apis/apps/v1"}, true},
		{"url no prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}},
			auth.Attributes{Verb: "get", Path: "/api/v1"}, false},
		{"url rule never matches resources", rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
			res("get", "", "pods", "", "ns", "p"), false},
	}
	for _, tt := range tests {
		if got := RuleAllows(tt.a, &tt.rule); got != tt.want {
			t.Errorf("%s: RuleAllows = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func fixture() *Static {
	ref := func(kind, name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	return &Static{
		ClusterRoles: []*rbacv1.ClusterRole{
			{ObjectMeta: metav1.ObjectMeta{Name: "view"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "nodes"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes"}}}},
		},
		Roles: []*rbacv1.Role{{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "a"},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}},
		RoleBindings: []*rbacv1.RoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Name: "sa-view", Namespace: "a"}, RoleRef: ref("ClusterRole", "view"),
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "bot"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "devs-cm", Namespace: "a"}, RoleRef: ref("Role", "cm"),
				Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "devs"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "dangling", Namespace: "a"}, RoleRef: ref("Role", "missing"),
				Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}}},
		},
		ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Name: "alice-nodes"}, RoleRef: ref("ClusterRole", "nodes"),
				Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}}},
		},
	}
}

func TestRule(t *testing.T) {
	rule := Rule(&Resolver{L: fixture()})
	bot := &auth.User{Name: "system:serviceaccount:a:bot", Groups: []string{"system:serviceaccounts"}}
	otherBot := &auth.User{Name: "system:serviceaccount:b:bot"}
	alice := &auth.User{Name: "alice", Groups: []string{"devs", "system:authenticated"}}
	tests := []struct {
		name string
		u    *auth.User
		a    auth.Attributes
		want auth.Decision
	}{
		{"sa in binding namespace", bot, res("list", "", "pods", "", "a", ""), auth.Allow},
		{"sa elsewhere", bot, res("list", "", "pods", "", "b", ""), auth.NoOpinion},
		{"same name other namespace", otherBot, res("list", "", "pods", "", "a", ""), auth.NoOpinion},
		{"group via role", alice, res("update", "", "configmaps", "", "a", "x"), auth.Allow},
		{"cluster binding everywhere", alice, res("get", "", "nodes", "", "", "n1"), auth.Allow},
		{"cluster binding in a namespace", alice, res("get", "", "nodes", "", "a", "n1"), auth.Allow},
		{"not granted", alice, res("delete", "", "configmaps", "", "a", "x"), auth.NoOpinion},
	}
	for _, tt := range tests {
		tt.a.User = tt.u
		d, reason, err := rule(context.Background(), tt.a)
		if err != nil || d != tt.want {
			t.Errorf("%s: got %v (%q, %v), want %v", tt.name, d, reason, err, tt.want)
		}
	}
}

func TestRulesForReportsDanglingRefs(t *testing.T) {
	r := &Resolver{L: fixture()}
	rules, errs := r.RulesFor(&auth.User{Name: "alice", Groups: []string{"devs"}}, "a")
	if len(rules) != 2 || len(errs) != 1 {
		t.Fatalf("rules %+v errs %v; want 2 rules (nodes, cm) and the missing role", rules, errs)
	}
}

func TestLateNotReady(t *testing.T) {
	l := &Late{}
	d, reason, err := Rule(&Resolver{L: l})(context.Background(), auth.Attributes{User: &auth.User{Name: "x"}, Verb: "get", Path: "/version"})
	if d != auth.NoOpinion || reason != ErrNotReady.Error() || err != nil {
		t.Fatalf("unset cache: %v %q %v", d, reason, err)
	}
	l.Set(fixture())
	if !l.Synced() {
		t.Fatal("Late with a synced lister is not ready")
	}
}
