// Package rbac is the RBAC authorizer: an auth.Rule that allows what the
// Roles and ClusterRoles bound to a user (by name, group or ServiceAccount)
// grant, evaluated as upstream's plugin/pkg/auth/authorizer/rbac does. The
// roles and bindings come from a Lister: client-go informers over the API
// server's loopback client in production (no polling), a static twin in
// tests. The same resolver answers SelfSubjectRulesReview and the
// escalation checks of role and binding writes.
package rbac
