package rbacescalation

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/auth/rbac"
)

func TestValidate(t *testing.T) {
	ref := func(kind, name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	podsRead := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	nodesAll := rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"nodes"}}
	escalate := rbacv1.PolicyRule{Verbs: []string{"escalate"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}}
	bindAdmin := rbacv1.PolicyRule{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"big"}}
	user := func(name string) []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: name}}
	}
	lister := &rbac.Static{
		ClusterRoles: []*rbacv1.ClusterRole{
			{ObjectMeta: metav1.ObjectMeta{Name: "reader"}, Rules: []rbacv1.PolicyRule{podsRead}},
			{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Rules: []rbacv1.PolicyRule{nodesAll}},
		},
		Roles: []*rbacv1.Role{{ObjectMeta: metav1.ObjectMeta{Name: "esc", Namespace: "ns"}, Rules: []rbacv1.PolicyRule{escalate, bindAdmin}}},
		RoleBindings: []*rbacv1.RoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, RoleRef: ref("ClusterRole", "reader"), Subjects: user("alice")},
			{ObjectMeta: metav1.ObjectMeta{Name: "r2", Namespace: "ns"}, RoleRef: ref("ClusterRole", "reader"), Subjects: user("carol")},
			{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}, RoleRef: ref("Role", "esc"), Subjects: user("carol")},
		},
	}
	res := &rbac.Resolver{L: lister}
	p := New(auth.NewAuthorizer(nil, rbac.Rule(res)), res)
	role := func(rules ...rbacv1.PolicyRule) runtime.Object {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}, Rules: rules}
	}
	binding := func(r rbacv1.RoleRef) runtime.Object {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}, RoleRef: r}
	}
	tests := []struct {
		name, user string
		groups     []string
		obj        runtime.Object
		wantErr    string
	}{
		{"role within rights", "alice", nil, role(podsRead), ""},
		{"role beyond rights", "alice", nil, role(nodesAll), "not currently held"},
		{"masters exempt", "root", []string{auth.GroupMasters}, role(nodesAll), ""},
		{"escalate verb", "carol", nil, role(nodesAll), ""},
		{"bind held role", "alice", nil, binding(ref("ClusterRole", "reader")), ""},
		{"bind bigger role", "alice", nil, binding(ref("ClusterRole", "big")), "not currently held"},
		{"bind verb", "carol", nil, binding(ref("ClusterRole", "big")), ""},
		{"bind missing role", "alice", nil, binding(ref("ClusterRole", "nope")), "not found"},
	}
	for _, tt := range tests {
		a := &admission.Attributes{Operation: admission.Create, Object: tt.obj, Namespace: "ns", Name: "x",
			Resource: rbacv1.SchemeGroupVersion.WithResource("roles"), User: &auth.User{Name: tt.user, Groups: tt.groups}}
		err := p.Validate(context.Background(), a)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.wantErr)
		case err != nil && !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err):
			t.Errorf("%s: %v is not an API status", tt.name, err)
		}
	}
}
