// Package localpath is orch's built-in local-path provisioner, like k3s's:
// the StorageClass "local-path" (provisioner orch.io/local-path, the
// cluster default, WaitForFirstConsumer, reclaim policy Delete; created at
// start when missing, never overwritten) and a controller that provisions a
// hostPath PersistentVolume on the node the scheduler picked for a claim
// and deletes released ones. Only the Raft leader runs it.
//
// Provisioning. server/controllers/pvbinder names the provisioner on a
// claim (volume.kubernetes.io/storage-provisioner) once the scheduler has
// set volume.kubernetes.io/selected-node. This controller then creates the
// PV pvc-<claim uid>: hostPath <dir>/<pv>_<namespace>_<claim> (type
// DirectoryOrCreate), where <dir> is the storage dir the node's agent
// reported in its Node annotation orch.io/local-path-dir (see agent/localpath
// for the whole scheme: the server does not know the agents' data dirs);
// required node affinity kubernetes.io/hostname=<node>; label
// orch.io/local-path-node=<node>; finalizer orch.io/local-path-cleanup;
// claimRef to the claim, so pvbinder binds the two. Capacity is the
// request (not enforced, as in k3s); only Filesystem volumes with
// ReadWriteOnce or ReadWriteOncePod access are provisioned.
//
// Deletion. A Released PV of this provisioner with policy Delete is
// deleted; its finalizer keeps it Terminating until the node's agent has
// removed the directory (agent/localpath).
package localpath
