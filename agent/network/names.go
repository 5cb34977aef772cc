package network

import (
	"crypto/sha256"
	"encoding/hex"
)

func idHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// HostVethName is the host end of a pod's veth: "veth" and 11 hex digits of
// the SHA-256 of the pod UID, 15 characters, the kernel's limit.
func HostVethName(podID string) string { return "veth" + idHash(podID)[:11] }

// netnsName is the pod namespace's file name under the netns dir.
func (m *Manager) netnsName(podID string) string { return m.cfg.NetnsPrefix + idHash(podID)[:12] }
