package agent

import (
	"context"
	"sync"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	corev1 "k8s.io/api/core/v1"
)

// containerdImages reports the images of orch's containerd namespace for
// the Node's status.images (what the scheduler's ImageLocality scores):
// one entry per image digest with its names (tags and repo@digest) and
// unpacked content size, cached per digest.
func containerdImages(ctrd *containerd.Client, ns string) func(ctx context.Context) []corev1.ContainerImage {
	var mu sync.Mutex
	sizes := map[string]int64{}
	return func(ctx context.Context) []corev1.ContainerImage {
		// A frozen containerd must not hold up the heartbeat.
		ctx, cancel := context.WithTimeout(namespaces.WithNamespace(ctx, ns), 5*time.Second)
		defer cancel()
		list, err := ctrd.ImageService().List(ctx)
		if err != nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		byDigest := map[string]*corev1.ContainerImage{}
		var order []string
		for _, img := range list {
			d := img.Target.Digest.String()
			ci := byDigest[d]
			if ci == nil {
				size, ok := sizes[d]
				if !ok {
					if size, err = containerd.NewImage(ctrd, img).Size(ctx); err != nil {
						continue
					}
					sizes[d] = size
				}
				ci = &corev1.ContainerImage{SizeBytes: size}
				byDigest[d] = ci
				order = append(order, d)
			}
			ci.Names = append(ci.Names, img.Name)
		}
		out := make([]corev1.ContainerImage, 0, len(order))
		for _, d := range order {
			out = append(out, *byDigest[d])
		}
		return out
	}
}
