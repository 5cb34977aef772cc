package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestPodHostPorts(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	port := func(p int32) []corev1.ContainerPort { return []corev1.ContainerPort{{ContainerPort: p, HostPort: p}} }
	tests := []struct {
		name string
		init []corev1.Container
		want int
	}{
		{"app container only", nil, 1},
		{"plain init container ignored", []corev1.Container{{Name: "i", Ports: port(90)}}, 1},
		{"sidecar counted", []corev1.Container{{Name: "s", Ports: port(91), RestartPolicy: &always}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := makePod("p", "", "", withHostPort(80, "", ""))
			pod.Spec.Containers[0].Ports = append(pod.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: 81})
			pod.Spec.InitContainers = tc.init
			if got := len(podHostPorts(pod)); got != tc.want {
				t.Fatalf("%d host ports, want %d", got, tc.want)
			}
		})
	}
}
