// Package csrsigning is kube-controller-manager's CSR signer over the
// cluster CA. It serves kubernetes.io/kube-apiserver-client (client auth
// required; digital signature and key encipherment allowed besides),
// kubernetes.io/kube-apiserver-client-kubelet and kubernetes.io/kubelet-serving
// (upstream's kubelet checks: O=system:nodes, CN=system:node:<name>, the
// kubelet's exact usages and SANs); kubernetes.io/legacy-unknown and other
// signers are left to others. An approved request that is neither issued,
// denied nor failed is checked and signed — the requested subject and
// SANs, never a CA, for spec.expirationSeconds within [10m, 1y] (a year
// without it), backdated five minutes and never past the CA
// (pki.Bundle.SignRequest) — or marked Failed with reason
// SignerValidationFailure. Signing errors are retried, not recorded.
package csrsigning
