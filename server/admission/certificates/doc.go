// Package certificates holds upstream's admission plug-ins for
// CertificateSigningRequests: CertificateApproval (approving or denying
// needs the approve verb on the request's signer), CertificateSigning
// (issuing a certificate through status needs the sign verb on it) and
// CertificateSubjectRestriction (no kubernetes.io/kube-apiserver-client
// certificate for the system:masters group).
package certificates
