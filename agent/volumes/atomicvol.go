package volumes

import (
	"context"
	"fmt"
	"os"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// atomicKind describes a volume type written with the atomic writer.
type atomicKind struct {
	plugin string
	tmpfs  bool // secret and projected contents never touch the disk
}

func atomicKindOf(v *corev1.Volume) (atomicKind, bool) {
	switch {
	case v.ConfigMap != nil:
		return atomicKind{plugin: pluginConfigMap}, true
	case v.Secret != nil:
		return atomicKind{plugin: pluginSecret, tmpfs: true}, true
	case v.DownwardAPI != nil:
		return atomicKind{plugin: pluginDownward}, true
	case v.Projected != nil:
		return atomicKind{plugin: pluginProjected, tmpfs: true}, true
	}
	return atomicKind{}, false
}

// setupAtomic builds the volume's payload, then (first time) creates its
// directory, on a tmpfs for secrets, and writes the payload atomically.
// The payload is built before anything is created, so a missing object
// leaves no trace.
func (m *Manager) setupAtomic(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, kind atomicKind, src Sources) (Volume, error) {
	payload, err := m.payload(ctx, pod, v, src)
	if err != nil {
		return Volume{}, err
	}
	dir := m.volumeDir(pod.UID, kind.plugin, v.Name)
	if kind.tmpfs {
		err = ensureTmpfs(dir, m.memorySize(pod, nil), 0o755)
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return Volume{}, err
	}
	changed, err := writeAtomic(dir, payload)
	if err != nil {
		return Volume{}, fmt.Errorf("write %s volume: %w", kind.plugin, err)
	}
	if changed {
		m.log.Debug("volume contents written", zap.String("pod", pod.Namespace+"/"+pod.Name),
			zap.String("volume", v.Name), zap.Int("files", len(payload)))
	}
	return Volume{HostPath: dir, ReadOnly: true}, nil
}

func (m *Manager) payload(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, src Sources) (map[string]FileProjection, error) {
	fsGroup := podFsGroup(pod)
	switch {
	case v.ConfigMap != nil:
		return configMapPayload(ctx, pod, v.ConfigMap, src, fsGroup)
	case v.Secret != nil:
		return secretPayload(ctx, pod, v.Secret, src, fsGroup)
	case v.DownwardAPI != nil:
		return downwardPayload(pod, v.DownwardAPI.Items, modeOr(v.DownwardAPI.DefaultMode), m.allocatable(), fsGroup)
	default:
		return m.projectedPayload(ctx, pod, v.Name, v.Projected, src, fsGroup)
	}
}

func podFsGroup(pod *corev1.Pod) *int64 {
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup
	}
	return nil
}

// modeOr returns *m or 0644, the API default of every defaultMode.
func modeOr(m *int32) int32 {
	if m != nil {
		return *m
	}
	return 0o644
}
