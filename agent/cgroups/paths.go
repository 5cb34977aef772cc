package cgroups

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	kubepodsName   = "kubepods"
	burstableName  = "burstable"
	besteffortName = "besteffort"
	podPrefix      = "pod"
)

// KubepodsPath is the absolute cgroup path of the node-allocatable cgroup,
// e.g. /orch/kubepods.
func (m *Manager) KubepodsPath() string {
	return "/" + path.Join(m.cfg.Root, kubepodsName)
}

// TierPath is the absolute cgroup path that holds pods of the QoS class:
// kubepods itself for Guaranteed, kubepods/burstable, kubepods/besteffort.
func (m *Manager) TierPath(class corev1.PodQOSClass) string {
	switch class {
	case corev1.PodQOSBurstable:
		return path.Join(m.KubepodsPath(), burstableName)
	case corev1.PodQOSBestEffort:
		return path.Join(m.KubepodsPath(), besteffortName)
	default:
		return m.KubepodsPath()
	}
}

// PodPath is the absolute cgroup path of a pod of the class: <tier>/pod<uid>.
func (m *Manager) PodPath(class corev1.PodQOSClass, uid types.UID) string {
	return path.Join(m.TierPath(class), podPrefix+string(uid))
}

// ContainerCgroupsPath is the OCI linux.cgroupsPath for a container of the pod
// whose cgroup parent EnsurePod returned, in the cgroupfs driver's form runc
// expects: an absolute path relative to each hierarchy's root, e.g.
// /orch/kubepods/burstable/pod<uid>/<containerID> (v1 and v2 alike).
func ContainerCgroupsPath(parent, containerID string) string {
	return path.Join("/", parent, containerID)
}

// uidFromDir returns the pod UID of a pod<uid> directory name.
func uidFromDir(name string) (types.UID, bool) {
	if !strings.HasPrefix(name, podPrefix) || len(name) == len(podPrefix) {
		return "", false
	}
	return types.UID(strings.TrimPrefix(name, podPrefix)), true
}

// classes lists the QoS classes in the order their tiers are searched.
var classes = []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort}
