// Package certificates serves certificates.k8s.io/v1 as kube-apiserver
// does (pkg/registry/certificates):
//
//   - CertificateSigningRequest: the requester's identity written into
//     the spec on create and the status cleared; the spec immutable; the
//     status subresource for signers (certificate and the non-approval
//     conditions), the approval subresource for approvers (Approved and
//     Denied, which cannot be removed). Validation is upstream's
//     (pkg/apis/certificates/validation): a signed PEM request, a
//     domain-qualified signer name (never kubernetes.io/legacy-unknown
//     through v1), known usages, expirationSeconds of at least 600,
//     well-formed conditions and PEM CERTIFICATE blocks, relaxed only for
//     what a stored object already had. Names may be any path segment;
//     spec.signerName is a field selector; the columns are kubectl's.
//   - ClusterTrustBundle: cluster-scoped; a bundle with a signer is named
//     <signer with '/' as ':'>:<name>, one without has no ':'; the signer
//     is immutable; the bundle is one or more distinct CA certificates
//     (header-less PEM, at most 1 MiB), not parsed again on updates that
//     keep it. spec.signerName is a field selector.
//   - PodCertificateRequest: namespaced; spec.maxExpirationSeconds
//     defaults to 86400 and lies in [3600, 7862400] ([3600, 86400] for
//     kubernetes.io signers); the key is a signed stub PKCS#10 request of
//     an allowed type (RSA 3072/4096, ECDSA P-256/384/521, Ed25519); the
//     spec is immutable and the status cleared on create. The status
//     subresource follows upstream's status validation: at most one of
//     Issued, Denied and Failed (status True), nothing changes after one
//     of them, Denied/Failed carry only conditions, and an issued chain's
//     leaf certifies the requested key, its times match the status,
//     notBefore is within 5 minutes of now, it lives 1 hour to
//     maxExpirationSeconds and beginRefreshAt is 10 minutes inside it.
//     spec.signerName, spec.podName and spec.nodeName are field
//     selectors.
//
// The admission checks (approve, sign, attest, the subject restriction
// and what nodes may request) are server/admission/certificates'; the
// CSR signer is server/controllers/csrsigning. Pod certificates are
// signed by whoever holds sign on the signer (orch ships no such signer,
// as upstream ships none); the agent's side is agent/certs.
package certificates
