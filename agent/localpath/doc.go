// Package localpath is the node side of orch's built-in local-path
// provisioner (server/controllers/localpath), the equivalent of k3s's
// local-path-provisioner without its helper pods.
//
// Scheme. Each agent keeps its local-path volumes in
// <agent-data-dir>/storage (default /var/lib/orch/storage) and reports that
// absolute directory on its Node in the annotation orch.io/local-path-dir
// (NodeDirAnnotation), so the provisioner, which runs on the server and
// does not know the agents' data dirs, can name the directory of a new
// volume: <dir>/<pv-name>_<namespace>_<pvc-name>. The PV is a hostPath
// volume (type DirectoryOrCreate) with required node affinity
// kubernetes.io/hostname=<node>, the label orch.io/local-path-node=<node>
// (NodeLabel) and the finalizer orch.io/local-path-cleanup (Finalizer).
//
// Data removal. The provisioner deletes a Released PV whose reclaim policy
// is Delete; the finalizer keeps it Terminating until the agent of its node
// (Cleaner, watching only the PVs labelled with its node) has removed the
// directory and then the finalizer. An agent that is down catches up when it
// starts again. A PV whose policy is Retain is never emptied: deleting it by
// hand only drops the finalizer. The Cleaner removes nothing outside its own
// storage dir, whatever the PV says.
package localpath
