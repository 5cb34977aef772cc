package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"go.uber.org/zap"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
)

// Label and Annotation mark the objects of the default policy.
var (
	Label      = map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}
	Annotation = map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}
)

func mark(m *metav1.ObjectMeta) {
	m.Labels = maps.Clone(m.Labels)
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	maps.Copy(m.Labels, Label)
	m.Annotations = maps.Clone(Annotation)
}

// Reconcile makes the default policy exist through client (the loopback
// client: it runs as system:masters). Like kube-apiserver's
// rbac/bootstrap-roles hook it adds missing objects, rules and subjects,
// never removes what users added, and leaves objects with autoupdate=false
// alone.
func Reconcile(ctx context.Context, client kubernetes.Interface, log *zap.Logger) error {
	var errs []error
	changed := 0
	report := func(kind, name string, op reconciliation.ReconcileOperation, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("reconciling %s %q: %w", kind, name, err))
			return
		}
		if op != reconciliation.ReconcileNone {
			changed++
			log.Debug("RBAC default policy", zap.String("kind", kind), zap.String("name", name), zap.String("operation", string(op)))
		}
	}
	defer func() {
		if changed > 0 {
			log.Info("RBAC default policy reconciled", zap.Int("objects created or updated", changed))
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, r := range ClusterRoles() {
		mark(&r.ObjectMeta)
		res, err := (&reconciliation.ReconcileRoleOptions{Role: reconciliation.ClusterRoleRuleOwner{ClusterRole: &r},
			Client: reconciliation.ClusterRoleModifier{Client: client.RbacV1().ClusterRoles()}, Confirm: true}).Run()
		report("ClusterRole", r.Name, op(res, err), err)
	}
	for _, b := range ClusterRoleBindings() {
		mark(&b.ObjectMeta)
		res, err := (&reconciliation.ReconcileRoleBindingOptions{RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &b},
			Client: reconciliation.ClusterRoleBindingClientAdapter{Client: client.RbacV1().ClusterRoleBindings()}, Confirm: true}).Run()
		report("ClusterRoleBinding", b.Name, bop(res, err), err)
	}
	for _, r := range NamespaceRoles() {
		mark(&r.ObjectMeta)
		res, err := (&reconciliation.ReconcileRoleOptions{Role: reconciliation.RoleRuleOwner{Role: &r},
			Client: reconciliation.RoleModifier{Client: client.RbacV1(), NamespaceClient: client.CoreV1().Namespaces()}, Confirm: true}).Run()
		report("Role", r.Namespace+"/"+r.Name, op(res, err), err)
	}
	for _, b := range NamespaceRoleBindings() {
		mark(&b.ObjectMeta)
		res, err := (&reconciliation.ReconcileRoleBindingOptions{RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: &b},
			Client: reconciliation.RoleBindingClientAdapter{Client: client.RbacV1(), NamespaceClient: client.CoreV1().Namespaces()}, Confirm: true}).Run()
		report("RoleBinding", b.Namespace+"/"+b.Name, bop(res, err), err)
	}
	return errors.Join(errs...)
}

func op(res *reconciliation.ReconcileClusterRoleResult, err error) reconciliation.ReconcileOperation {
	if err != nil || res == nil {
		return reconciliation.ReconcileNone
	}
	return res.Operation
}

func bop(res *reconciliation.ReconcileClusterRoleBindingResult, err error) reconciliation.ReconcileOperation {
	if err != nil || res == nil {
		return reconciliation.ReconcileNone
	}
	return res.Operation
}
