// Package certificates holds upstream's admission plug-ins for the
// certificates.k8s.io API: CertificateApproval (approving or denying a
// CertificateSigningRequest needs the approve verb on its signer),
// CertificateSigning (issuing a certificate through status needs the
// sign verb on it), CertificateSubjectRestriction (no
// kubernetes.io/kube-apiserver-client certificate for the system:masters
// group), ClusterTrustBundleAttest (a ClusterTrustBundle that names a
// signer needs the attest verb on it), PodCertificateRequestSigning (a
// PodCertificateRequest's status changes only with sign on its signer,
// which upstream checks in the status strategy) and
// PodCertificateRequestNodeRestriction (NodeRestriction's rules for
// requests a node creates: only for a pod bound to it, with the pod's,
// the node's and the ServiceAccount's real UIDs, and for a signer the
// pod's podCertificate volumes name).
package certificates
