package volumes

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// imagePlugin is kubelet's directory name for image volumes.
const imagePlugin = "kubernetes.io~image"

// ImageVolumes provides image volumes: the root filesystem of an OCI
// image (or artifact), read-only.
type ImageVolumes interface {
	// MountImage makes src's image available as its pull policy says and
	// mounts it read-only at target.
	MountImage(ctx context.Context, pod *corev1.Pod, src *corev1.ImageVolumeSource, volume, target string) error
	// ReleaseImages drops what MountImage kept for the pod, once the
	// mounts are gone.
	ReleaseImages(ctx context.Context, uid types.UID) error
}

// setupImage mounts an image volume once; a mounted one is left alone, so
// a refresh never pulls again.
func (m *Manager) setupImage(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) (Volume, error) {
	if m.cfg.Images == nil {
		return Volume{}, fmt.Errorf("%w: image", ErrUnsupported)
	}
	dir := m.volumeDir(pod.UID, imagePlugin, v.Name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return Volume{}, fmt.Errorf("create %s: %w", dir, err)
	}
	mounted, err := isMountPoint(dir)
	if err != nil {
		return Volume{}, err
	}
	if !mounted {
		if err := m.cfg.Images.MountImage(ctx, pod, v.Image, v.Name, dir); err != nil {
			return Volume{}, err
		}
	}
	return Volume{HostPath: dir, ReadOnly: true}, nil
}
