// Package certificates serves certificates.k8s.io/v1
// CertificateSigningRequest as kube-apiserver does: the requester's
// identity written into the spec on create, the spec immutable, the
// status subresource for signers (certificate and non-approval
// conditions) and the approval subresource for approvers (Approved and
// Denied conditions, which cannot be removed), upstream's validation and
// kubectl's columns. The admission checks of approvers and signers are
// server/admission/certificates'; the signer is
// server/controllers/csrsigning.
package certificates
