package scheduler

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ImageLocality thresholds, as upstream.
const (
	mb                    int64 = 1024 * 1024
	minImageThreshold     int64 = 23 * mb
	maxContainerThreshold int64 = 1000 * mb
)

// imageState is an image's size and on how many nodes it is present.
type imageState struct {
	size     int64
	numNodes int
}

// imageStates indexes node.status.images by normalized name, once per
// snapshot (the scheduler cache's imageStates).
func (s *Snapshot) imageStates() map[string]imageState {
	if s.images != nil {
		return s.images
	}
	s.images = map[string]imageState{}
	for _, ni := range s.Nodes {
		for _, img := range ni.Node.Status.Images {
			for _, n := range img.Names {
				st := s.images[normalizedImageName(n)]
				st.size = img.SizeBytes
				st.numNodes++
				s.images[normalizedImageName(n)] = st
			}
		}
	}
	return s.images
}

// normalizedImageName adds ":latest" to untagged names, as upstream, and
// also expands Docker Hub short names ("nginx:1.25" and
// "docker.io/library/nginx:1.25" are one image), because containerd
// reports fully qualified names while pods usually use short ones.
func normalizedImageName(name string) string {
	if i := strings.Index(name, "@"); i >= 0 {
		return name // digests are compared as they are
	}
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	first, _, hasSlash := strings.Cut(name, "/")
	switch {
	case !hasSlash:
		return "docker.io/library/" + name
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		return "docker.io/" + name
	}
	return name
}

// imageLocalityScore is upstream's ImageLocality Score (no normalization).
func imageLocalityScore(pod *corev1.Pod, ni *NodeInfo, images map[string]imageState, totalNodes int) int64 {
	var sum int64
	count := 0
	onNode := func(image string) {
		count++
		name := normalizedImageName(image)
		st, ok := images[name]
		if !ok || !nodeHasImage(ni.Node, name) {
			return
		}
		sum += int64(float64(st.size) * float64(st.numNodes) / float64(totalNodes))
	}
	for i := range pod.Spec.InitContainers {
		onNode(pod.Spec.InitContainers[i].Image)
	}
	for i := range pod.Spec.Containers {
		onNode(pod.Spec.Containers[i].Image)
	}
	maxThreshold := maxContainerThreshold * int64(count)
	sum = min(max(sum, minImageThreshold), maxThreshold)
	if maxThreshold == minImageThreshold {
		return 0
	}
	return MaxNodeScore * (sum - minImageThreshold) / (maxThreshold - minImageThreshold)
}

func nodeHasImage(node *corev1.Node, name string) bool {
	for _, img := range node.Status.Images {
		for _, n := range img.Names {
			if normalizedImageName(n) == name {
				return true
			}
		}
	}
	return false
}
