package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// Group is rbac.authorization.k8s.io for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: rbacv1.GroupName, Resources: resources, AddToScheme: rbacv1.AddToScheme}
}

func resources(registry.Config) []*registry.Resource {
	gv := rbacv1.SchemeGroupVersion
	defs := []registry.Def{
		{GroupVersion: gv, Resource: "roles", Kind: "Role", Namespaced: true,
			New: registry.NewObjects[rbacv1.Role](), NewList: registry.NewObjects[rbacv1.RoleList](),
			Hooks: registry.Hooks{NameFn: nameFn,
				Validate:       func(o runtime.Object) field.ErrorList { return ValidateRole(o.(*rbacv1.Role)) },
				ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return ValidateRole(o.(*rbacv1.Role)) }}},
		{GroupVersion: gv, Resource: "clusterroles", Kind: "ClusterRole",
			New: registry.NewObjects[rbacv1.ClusterRole](), NewList: registry.NewObjects[rbacv1.ClusterRoleList](),
			Hooks: registry.Hooks{NameFn: nameFn,
				Validate:       func(o runtime.Object) field.ErrorList { return ValidateClusterRole(o.(*rbacv1.ClusterRole)) },
				ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return ValidateClusterRole(o.(*rbacv1.ClusterRole)) }}},
		{GroupVersion: gv, Resource: "rolebindings", Kind: "RoleBinding", Namespaced: true,
			New: registry.NewObjects[rbacv1.RoleBinding](), NewList: registry.NewObjects[rbacv1.RoleBindingList](),
			Hooks: bindingHooks(func(o runtime.Object) (*rbacv1.RoleRef, []rbacv1.Subject) {
				b := o.(*rbacv1.RoleBinding)
				return &b.RoleRef, b.Subjects
			}, true)},
		{GroupVersion: gv, Resource: "clusterrolebindings", Kind: "ClusterRoleBinding",
			New: registry.NewObjects[rbacv1.ClusterRoleBinding](), NewList: registry.NewObjects[rbacv1.ClusterRoleBindingList](),
			Hooks: bindingHooks(func(o runtime.Object) (*rbacv1.RoleRef, []rbacv1.Subject) {
				b := o.(*rbacv1.ClusterRoleBinding)
				return &b.RoleRef, b.Subjects
			}, false)},
	}
	return registry.BuildAll(defs...)
}

// nameFn is upstream's minimal name rule for roles and bindings: a valid
// path segment (so "system:controller:x" is fine).
func nameFn(name string, _ bool) []string { return path.IsValidPathSegmentName(name) }

// bindingHooks are the rules shared by RoleBinding (namespaced) and
// ClusterRoleBinding; parts returns the binding's roleRef and subjects.
func bindingHooks(parts func(runtime.Object) (*rbacv1.RoleRef, []rbacv1.Subject), namespaced bool) registry.Hooks {
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	return registry.Hooks{
		NameFn: nameFn,
		Defaults: func(o runtime.Object) {
			ref, subjects := parts(o)
			DefaultBinding(ref, subjects)
		},
		Validate: func(o runtime.Object) field.ErrorList {
			ref, subjects := parts(o)
			return ValidateBinding(*ref, subjects, kinds, namespaced)
		},
		ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
			ref, subjects := parts(o)
			oldRef, _ := parts(old)
			errs := ValidateBinding(*ref, subjects, kinds, namespaced)
			if *oldRef != *ref {
				errs = append(errs, field.Invalid(field.NewPath("roleRef"), *ref, "cannot change roleRef"))
			}
			return errs
		},
		Columns: []metav1.TableColumnDefinition{
			registry.Col("Role", "string", 0, "Role of the binding."),
			registry.AgeColumn(),
			registry.Col("Users", "string", 1, "Users in the binding."),
			registry.Col("Groups", "string", 1, "Groups in the binding."),
			registry.Col("ServiceAccounts", "string", 1, "ServiceAccounts in the binding."),
		},
		Row: func(o runtime.Object) []interface{} {
			ref, subjects := parts(o)
			users, groups, sas := SubjectCells(subjects)
			return []interface{}{ref.Kind + "/" + ref.Name, registry.Age(o), users, groups, sas}
		},
	}
}
