// Package certificates serves certificates.k8s.io/v1
// CertificateSigningRequest as kube-apiserver does
// (pkg/registry/certificates/certificates): the requester's identity
// written into the spec on create and the status cleared; the spec
// immutable; the status subresource for signers (certificate and the
// non-approval conditions), the approval subresource for approvers
// (Approved and Denied, which cannot be removed). Validation is
// upstream's (pkg/apis/certificates/validation): a signed PEM request, a
// domain-qualified signer name (never kubernetes.io/legacy-unknown through
// v1), known usages, expirationSeconds of at least 600, well-formed
// conditions and PEM CERTIFICATE blocks, relaxed only for what a stored
// object already had. Names may be any path segment; spec.signerName is a
// field selector; the columns are kubectl's. The admission checks of
// approvers and signers are server/admission/certificates'; the signer is
// server/controllers/csrsigning.
package certificates
