package node

import (
	"context"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// maxImages is kubelet's --node-status-max-images default.
const maxImages = 50

func listImages(ctx context.Context, cfg Config) []corev1.ContainerImage {
	if cfg.Images == nil {
		return nil
	}
	return TopImages(cfg.Images(ctx))
}

// TopImages sorts images by size, largest first, and keeps kubelet's 50.
func TopImages(imgs []corev1.ContainerImage) []corev1.ContainerImage {
	sort.SliceStable(imgs, func(i, j int) bool { return imgs[i].SizeBytes > imgs[j].SizeBytes })
	if len(imgs) > maxImages {
		imgs = imgs[:maxImages]
	}
	return imgs
}

func sameImages(a, b []corev1.ContainerImage) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.ContainerImage) bool {
		return x.SizeBytes == y.SizeBytes && slices.Equal(x.Names, y.Names)
	})
}
