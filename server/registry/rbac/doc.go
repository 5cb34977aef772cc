// Package rbac serves rbac.authorization.k8s.io/v1: Role, ClusterRole,
// RoleBinding and ClusterRoleBinding, with upstream's defaults, validation
// (pkg/apis/rbac/validation) and kubectl columns. Who may create what is
// decided elsewhere: the RBAC authorizer (server/auth/rbac) reads these
// objects, and escalation prevention is an admission plug-in
// (server/admission/rbacescalation).
package rbac
