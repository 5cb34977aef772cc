// Package certs is the agent's side of the certificates.k8s.io trust
// APIs, as upstream's kubelet has it in pkg/kubelet/clustertrustbundle
// and pkg/kubelet/podcertificate:
//
//   - Bundles answers clusterTrustBundle projections from an informer of
//     ClusterTrustBundles, started on first use: a bundle by name, or
//     every bundle of a signer matching a label selector (nil matches
//     nothing, empty everything), deduplicated and re-encoded as PEM
//     CERTIFICATE blocks; optional sources get an empty file when nothing
//     matches.
//   - PodCerts answers podCertificate projections: for each source of a
//     pod it makes a private key of the requested type, creates a
//     PodCertificateRequest naming the pod, its ServiceAccount and this
//     node (with their UIDs), and hands out the key and the issued chain
//     once a signer issued it; from status.beginRefreshAt (plus up to 5
//     minutes of jitter) it requests a new certificate with a new key
//     and keeps serving the old one until then. Denied and Failed
//     requests are final for that source (an event says why). Its
//     informer watches this node's requests (spec.nodeName) and resyncs
//     the pod when one changes, so a pod waiting for its certificate
//     starts as soon as it is issued.
//
// State is in memory: after a restart every source is requested again.
package certs
