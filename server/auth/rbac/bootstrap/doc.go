// Package bootstrap is the default RBAC policy orch keeps in every
// cluster, the roles and bindings upstream's bootstrappolicy creates that
// users and charts refer to (cluster-admin, admin/edit/view with their
// aggregation, system:discovery, system:basic-user, …), and the
// reconciliation that runs on the leader at every start: missing objects
// are created and missing rules or subjects added, unless an object is
// annotated rbac.authorization.kubernetes.io/autoupdate=false.
package bootstrap
