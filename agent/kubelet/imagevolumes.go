package kubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/images"
	"github.com/orch/orch/agent/volumes"
)

// ImageVolumes adapts agent/images to volumes.ImageVolumes: it pulls an
// image volume's reference with the pod's imagePullSecrets and mounts a
// read-only snapshot view of it.
type ImageVolumes struct {
	S      *images.Service
	Client kubernetes.Interface
}

var _ volumes.ImageVolumes = ImageVolumes{}

// MountImage implements volumes.ImageVolumes.
func (iv ImageVolumes) MountImage(ctx context.Context, pod *corev1.Pod, src *corev1.ImageVolumeSource, volume, target string) error {
	policy := src.PullPolicy
	if policy == "" { // API defaulting: Always for :latest or no tag
		policy = corev1.PullIfNotPresent
		if alwaysPull(&corev1.Container{Image: src.Reference}) {
			policy = corev1.PullAlways
		}
	}
	img, err := iv.S.EnsureImage(ctx, src.Reference, policy, iv.auth(ctx, pod, src.Reference))
	if err != nil {
		return fmt.Errorf("image volume %q: %w", volume, err)
	}
	return iv.S.MountView(ctx, img, images.ViewKey(string(pod.UID), volume), string(pod.UID), target)
}

// ReleaseImages implements volumes.ImageVolumes.
func (iv ImageVolumes) ReleaseImages(ctx context.Context, uid types.UID) error {
	return iv.S.RemoveViews(ctx, string(uid))
}

// auth is the login for ref in the pod's imagePullSecrets that exist.
func (iv ImageVolumes) auth(ctx context.Context, pod *corev1.Pod, ref string) *images.Auth {
	return pullAuth(ref, readPullSecrets(ctx, iv.Client, pod, nil))
}
