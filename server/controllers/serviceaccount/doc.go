// Package serviceaccount holds two leader-only controllers of
// kube-controller-manager, on the shared cache (server/controllers/kit):
//
//   - ServiceAccounts keeps a ServiceAccount named "default" in every
//     active namespace, re-creating it when it is deleted;
//   - RootCA keeps the ConfigMap "kube-root-ca.crt" (key ca.crt = the
//     cluster CA) in every active namespace, restoring its data when it is
//     edited and re-creating it when it is deleted, as upstream's
//     root-ca-cert-publisher does.
//
// Both are level-based: events enqueue the namespace, the sync makes the
// namespace's object right. Terminating namespaces are left alone.
package serviceaccount
