// Package pvbinder is the essentials of kube-controller-manager's
// PersistentVolume controller: it binds PersistentVolumeClaims to
// PersistentVolumes both ways and runs the reclaim policy of released
// volumes. Only the Raft leader runs it.
//
// Binding. An unbound claim takes the smallest Available volume that
// satisfies it: same StorageClass (an unset spec.storageClassName means the
// cluster's default class, orch having no DefaultStorageClass admission;
// "" means no class), the volume's access modes include the claim's, its
// capacity covers the request, its labels match the claim's selector, same
// volume mode, not being deleted. A volume pre-bound to the claim
// (spec.claimRef) wins; a claim pre-bound to a volume (spec.volumeName)
// takes that one. The volume is written first (spec.claimRef, then phase
// Bound), then the claim (spec.volumeName with the annotations
// pv.kubernetes.io/bind-completed and bound-by-controller, then phase
// Bound with the volume's capacity and access modes); every step is
// idempotent, so a conflict just retries the key.
//
// Classes. An Immediate class binds at once; a WaitForFirstConsumer class
// waits for the scheduler's annotation volume.kubernetes.io/selected-node
// on the claim (event WaitForFirstConsumer) and then only takes volumes
// whose node affinity admits that node. When nothing matches and the class
// has a provisioner, the claim gets the annotations
// volume.kubernetes.io/storage-provisioner (and the beta one) naming it,
// with an ExternalProvisioning event; the provisioner (for orch's own
// class: server/controllers/localpath) creates a volume pre-bound to it.
//
// Reclaim. A volume whose claim is gone (not found, or recreated with
// another UID; a cache miss is confirmed by a live read) becomes Released.
// Retain keeps it; Delete is left to the volume's provisioner
// (pv.kubernetes.io/provisioned-by), or marks it Failed with upstream's
// VolumeFailedDelete event when it has none; Recycle is not supported
// (Failed). A bound claim whose volume disappeared becomes Lost.
//
// Protection. Every claim gets the finalizer kubernetes.io/pvc-protection
// (upstream adds it at admission; here the binder adds it at once); a
// deleted claim keeps it until no unfinished pod uses the claim (the cache
// confirmed by a live list), so a volume is never released, and a
// local-path volume's data never removed, under a running pod.
package pvbinder
