// Package clusterconfig serves the configuration objects charts and CSI
// drivers create alongside their workloads: networking.k8s.io/v1
// IngressClass, node.k8s.io/v1 RuntimeClass and storage.k8s.io/v1 CSIDriver,
// CSINode, VolumeAttachment, VolumeAttributesClass (driver name and
// parameters immutable) and the namespaced CSIStorageCapacity (node
// topology and class immutable), with upstream's defaults, the validation
// users meet and kubectl's columns. orch stores them; its agent does not act
// on CSI objects (it has no CSI plumbing) and runs every pod with runc.
package clusterconfig
