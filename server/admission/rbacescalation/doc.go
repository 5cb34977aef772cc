// Package rbacescalation is RBAC's escalation prevention as an admission
// validator, with upstream's rules (pkg/registry/rbac/*/policybased): a
// user may create or update a Role or ClusterRole only with rules they hold
// themselves, or with the `escalate` verb on it; and a RoleBinding or
// ClusterRoleBinding only to a role whose rules they hold, or with the
// `bind` verb on that role. Members of system:masters are exempt.
package rbacescalation
