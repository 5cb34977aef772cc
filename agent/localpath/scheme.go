package localpath

import (
	"path/filepath"
	"strings"
)

// The contract between the provisioner (server) and the agents.
const (
	// ProvisionerName is the StorageClass provisioner of local-path volumes.
	ProvisionerName = "orch.io/local-path"
	// StorageClassName is the default StorageClass the server creates.
	StorageClassName = "local-path"
	// NodeDirAnnotation on a Node is the absolute directory its agent keeps
	// local-path volumes in.
	NodeDirAnnotation = "orch.io/local-path-dir"
	// NodeLabel on a local-path PV names the node holding its data.
	NodeLabel = "orch.io/local-path-node"
	// Finalizer on a local-path PV: the node's agent removes it once the
	// data is gone (or kept, for Retain).
	Finalizer = "orch.io/local-path-cleanup"
	// ProvisionedByAnnotation is upstream's annotation naming the
	// provisioner of a PV.
	ProvisionedByAnnotation = "pv.kubernetes.io/provisioned-by"
)

// StorageDir is the local-path directory of an agent with dataDir.
func StorageDir(dataDir string) string { return filepath.Join(dataDir, "storage") }

// VolumePath is the directory of PV pvName bound to claim ns/claim inside
// the node's storage dir.
func VolumePath(storageDir, pvName, ns, claim string) string {
	return filepath.Join(storageDir, pvName+"_"+ns+"_"+claim)
}

// IsVolumePath reports whether path is a direct child of storageDir (the
// only paths the agent creates world-writable or removes).
func IsVolumePath(storageDir, path string) bool {
	if !filepath.IsAbs(path) || !filepath.IsAbs(storageDir) {
		return false
	}
	clean := filepath.Clean(path)
	base := filepath.Base(clean)
	return filepath.Dir(clean) == filepath.Clean(storageDir) && base != "." && base != ".." &&
		!strings.ContainsRune(base, filepath.Separator)
}
