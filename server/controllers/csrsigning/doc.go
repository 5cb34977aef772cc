// Package csrsigning is kube-controller-manager's CSR signer for
// kubernetes.io/kube-apiserver-client: approved, unfailed requests of that
// signer without a certificate are checked (client auth usage, only
// digital signature and key encipherment besides, no subject alternative
// names) and signed with the cluster CA — the requested subject, for
// spec.expirationSeconds or a year, never past the CA — or marked Failed
// with reason SignerValidationFailure. Requests of other signers are left
// to their signers.
package csrsigning
