package kubelet

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/network"
)

func TestPodPortMappings(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}, {ContainerPort: 81}}},
		{Name: "b", Ports: []corev1.ContainerPort{{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolUDP, HostIP: "192.0.2.1"}}},
	}}}
	want := []network.PortMapping{{HostPort: 8080, ContainerPort: 80, Protocol: "tcp"},
		{HostIP: "192.0.2.1", HostPort: 53, ContainerPort: 53, Protocol: "udp"}}
	if got := podPortMappings(pod); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	pod.Spec.HostNetwork = true
	if got := podPortMappings(pod); got != nil {
		t.Errorf("hostNetwork pod: %+v", got)
	}
}
