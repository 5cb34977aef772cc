package volumes

import (
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// setupEmptyDir creates the emptyDir (mode 0777, as the kubelet does), on
// a sized tmpfs for medium Memory. With a pod fsGroup the directory is
// group-owned by it and setgid, so new files inherit the group.
func (m *Manager) setupEmptyDir(pod *corev1.Pod, v *corev1.Volume) (Volume, error) {
	dir := m.volumeDir(pod.UID, pluginEmptyDir, v.Name)
	switch v.EmptyDir.Medium {
	case corev1.StorageMediumDefault:
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return Volume{}, fmt.Errorf("create emptyDir: %w", err)
		}
	case corev1.StorageMediumMemory:
		if err := ensureTmpfs(dir, m.memorySize(pod, v.EmptyDir.SizeLimit), 0o777); err != nil {
			return Volume{}, err
		}
	default:
		return Volume{}, fmt.Errorf("%w: emptyDir medium %q", ErrUnsupported, v.EmptyDir.Medium)
	}
	mode := os.FileMode(0o777)
	if gid := podFsGroup(pod); gid != nil {
		if err := os.Chown(dir, -1, int(*gid)); err != nil {
			return Volume{}, fmt.Errorf("chown emptyDir to fsGroup %d: %w", *gid, err)
		}
		mode |= os.ModeSetgid
	}
	if err := os.Chmod(dir, mode); err != nil {
		return Volume{}, fmt.Errorf("chmod emptyDir: %w", err)
	}
	return Volume{HostPath: dir}, nil
}

// memorySize sizes a memory-backed volume like the kubelet: the smallest
// of the node's allocatable memory, the pod's memory limit (when every
// container has one) and sizeLimit; 0 (kernel default) if none is known.
func (m *Manager) memorySize(pod *corev1.Pod, sizeLimit *resource.Quantity) int64 {
	var size int64
	consider := func(v int64) {
		if v > 0 && (size == 0 || v < size) {
			size = v
		}
	}
	if a, ok := m.allocatable()[corev1.ResourceMemory]; ok {
		consider(a.Value())
	}
	consider(podMemoryLimit(pod))
	if sizeLimit != nil {
		consider(sizeLimit.Value())
	}
	return size
}

// podMemoryLimit is max(sum of containers' limits, largest init limit),
// or 0 when a container has no memory limit.
func podMemoryLimit(pod *corev1.Pod) int64 {
	var sum int64
	for _, c := range pod.Spec.Containers {
		q, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok || q.IsZero() {
			return 0
		}
		sum += q.Value()
	}
	for _, c := range pod.Spec.InitContainers {
		q, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok || q.IsZero() {
			return 0
		}
		sum = max(sum, q.Value())
	}
	return sum
}
