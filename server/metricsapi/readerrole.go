package metricsapi

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ReaderRoleName is the ClusterRole metrics-server's manifests ship: read
// access to metrics.k8s.io, aggregated into view, edit and admin.
const ReaderRoleName = "system:aggregated-metrics-reader"

// ReaderRole is that ClusterRole.
func ReaderRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ReaderRoleName, Labels: map[string]string{
			"rbac.authorization.k8s.io/aggregate-to-view":  "true",
			"rbac.authorization.k8s.io/aggregate-to-edit":  "true",
			"rbac.authorization.k8s.io/aggregate-to-admin": "true",
		}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{GroupVersion.Group}, Resources: []string{"pods", "nodes"},
			Verbs: []string{"get", "list", "watch"}}},
	}
}

// EnsureReaderRole creates ReaderRole unless a ClusterRole of that name
// exists (one a user or metrics-server's manifests made is left alone).
func EnsureReaderRole(ctx context.Context, client kubernetes.Interface) error {
	_, err := client.RbacV1().ClusterRoles().Create(ctx, ReaderRole(), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ClusterRole %s: %w", ReaderRoleName, err)
	}
	return nil
}
