package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func withImage(size int64, names ...string) nodeOpt {
	return func(n *corev1.Node) {
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: names, SizeBytes: size})
	}
}

func TestNormalizedImageName(t *testing.T) {
	tests := map[string]string{
		"nginx":                        "docker.io/library/nginx:latest",
		"nginx:1.25":                   "docker.io/library/nginx:1.25",
		"docker.io/library/nginx:1.25": "docker.io/library/nginx:1.25",
		"bitnami/redis":                "docker.io/bitnami/redis:latest",
		"registry:5000/app":            "registry:5000/app:latest",
		"ghcr.io/x/y:v1":               "ghcr.io/x/y:v1",
		"nginx@sha256:abc":             "nginx@sha256:abc",
	}
	for in, want := range tests {
		if got := normalizedImageName(in); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func TestImageLocality(t *testing.T) {
	const big = 500 * mb
	nodes := []*corev1.Node{
		makeNode("with", "4", "8Gi", withImage(big, "docker.io/library/nginx:1.25", "docker.io/library/nginx@sha256:1")),
		makeNode("without", "4", "8Gi"),
		makeNode("small", "4", "8Gi", withImage(10*mb, "docker.io/library/nginx:1.25")),
	}
	snap := NewSnapshot(nodes, nil)
	images := snap.imageStates()
	pod := makePod("p", "", "", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.25" })
	// The image is on 2 of 3 nodes; the state keeps the last size seen
	// (10MB): 10MB*2/3 is under the 23MB threshold, so every node scores 0.
	// On a snapshot of the first two nodes only: 500MB*1/2 = 250MB.
	for i, want := range []int64{0, 0, 0} {
		if got := imageLocalityScore(pod, snap.Nodes[i], images, len(nodes)); got != want {
			t.Errorf("%s: %d, want %d", snap.Nodes[i].Node.Name, got, want)
		}
	}
	two := NewSnapshot(nodes[:2], nil)
	want := MaxNodeScore * (250*mb - minImageThreshold) / (maxContainerThreshold - minImageThreshold)
	if got := imageLocalityScore(pod, two.Nodes[0], two.imageStates(), 2); got != want {
		t.Errorf("with: %d, want %d", got, want)
	}
	res, err := Schedule(pod, two, Config{})
	if err != nil || res.Node != "with" {
		t.Fatalf("got %+v %v, want node with the image", res, err)
	}
}
