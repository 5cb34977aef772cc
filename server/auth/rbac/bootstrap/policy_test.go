package bootstrap

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orch/orch/server/registry/rbac"
)

// TestPolicyIsValid: every default object passes the API's own validation.
func TestPolicyIsValid(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range ClusterRoles() {
		if seen[r.Name] {
			t.Errorf("ClusterRole %s listed twice", r.Name)
		}
		seen[r.Name] = true
		if errs := rbac.ValidateClusterRole(&r); len(errs) > 0 {
			t.Errorf("ClusterRole %s: %v", r.Name, errs)
		}
	}
	for _, b := range ClusterRoleBindings() {
		if !seen[b.RoleRef.Name] {
			t.Errorf("ClusterRoleBinding %s refers to a role the policy lacks", b.Name)
		}
		if errs := rbac.ValidateBinding(b.RoleRef, b.Subjects, []string{"ClusterRole"}, false); len(errs) > 0 {
			t.Errorf("ClusterRoleBinding %s: %v", b.Name, errs)
		}
	}
	for _, r := range NamespaceRoles() {
		if errs := rbac.ValidateRole(&r); len(errs) > 0 {
			t.Errorf("Role %s: %v", r.Name, errs)
		}
	}
	for _, b := range NamespaceRoleBindings() {
		if errs := rbac.ValidateBinding(b.RoleRef, b.Subjects, []string{"Role", "ClusterRole"}, true); len(errs) > 0 {
			t.Errorf("RoleBinding %s: %v", b.Name, errs)
		}
	}
}

// TestReconcile: a first run creates everything, a second changes nothing,
// removed rules come back, and autoupdate=false is respected.
func TestReconcile(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	log := zaptest.NewLogger(t)
	if err := Reconcile(ctx, cs, log); err != nil {
		t.Fatal(err)
	}
	list, _ := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if len(list.Items) != len(ClusterRoles()) {
		t.Fatalf("%d ClusterRoles, want %d", len(list.Items), len(ClusterRoles()))
	}
	edit := func(name string, f func(*rbacv1.ClusterRole)) {
		cr, err := cs.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f(cr)
		if _, err := cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	edit("system:heapster", func(cr *rbacv1.ClusterRole) { cr.Rules = nil })
	edit("system:kube-dns", func(cr *rbacv1.ClusterRole) {
		cr.Rules = nil
		cr.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
	})
	if err := Reconcile(ctx, cs, log); err != nil {
		t.Fatal(err)
	}
	if cr, _ := cs.RbacV1().ClusterRoles().Get(ctx, "system:heapster", metav1.GetOptions{}); len(cr.Rules) == 0 {
		t.Error("system:heapster's rules were not restored")
	}
	if cr, _ := cs.RbacV1().ClusterRoles().Get(ctx, "system:kube-dns", metav1.GetOptions{}); len(cr.Rules) != 0 {
		t.Error("system:kube-dns was changed despite autoupdate=false")
	}
}
