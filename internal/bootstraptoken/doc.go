// Package bootstraptoken is the format of Kubernetes bootstrap tokens as
// k8s.io/cluster-bootstrap and kubeadm define it: a token
// "[a-z0-9]{6}.[a-z0-9]{16}" (ID and secret) stored as the Secret
// kube-system/bootstrap-token-<id> of type bootstrap.kubernetes.io/token
// with the keys token-id, token-secret, expiration (RFC 3339),
// description, usage-bootstrap-<usage> and auth-extra-groups.
//
// orch uses them as agent join tokens (`orch token create`, like
// `k3s token create`): Check decides whether a presented token may join,
// Expiration is upstream's expiry rule, which the token cleaner
// (server/controllers/tokencleaner) uses too. The package is pure: no
// client, no clock of its own.
package bootstraptoken
