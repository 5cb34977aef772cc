package volumes

import (
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
)

// Plugin directory names, as the kubelet names them under pods/<uid>/volumes.
const (
	pluginEmptyDir  = "kubernetes.io~empty-dir"
	pluginConfigMap = "kubernetes.io~configmap"
	pluginSecret    = "kubernetes.io~secret"
	pluginDownward  = "kubernetes.io~downward-api"
	pluginProjected = "kubernetes.io~projected"
)

func (m *Manager) podDir(uid types.UID) string {
	return filepath.Join(m.cfg.PodsDir, string(uid))
}

func (m *Manager) volumesDir(uid types.UID) string {
	return filepath.Join(m.podDir(uid), "volumes")
}

func (m *Manager) volumeDir(uid types.UID, plugin, name string) string {
	return filepath.Join(m.volumesDir(uid), plugin, name)
}
