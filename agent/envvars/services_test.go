package envvars

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func svc(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func TestServiceEnv(t *testing.T) {
	services := []*corev1.Service{
		svc("default", "kubernetes", "10.43.0.1", corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}),
		svc("app", "my-db", "10.43.0.7", corev1.ServicePort{Port: 5432}, corev1.ServicePort{Name: "metrics", Port: 9187, Protocol: corev1.ProtocolUDP}),
		svc("app", "headless", "None", corev1.ServicePort{Port: 80}),
		svc("other", "x", "10.43.0.9", corev1.ServicePort{Port: 80}),
	}
	kube := map[string]string{
		"KUBERNETES_SERVICE_HOST": "10.43.0.1", "KUBERNETES_SERVICE_PORT": "443", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT": "tcp://10.43.0.1:443", "KUBERNETES_PORT_443_TCP": "tcp://10.43.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp", "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.43.0.1",
	}
	withDB := map[string]string{
		"MY_DB_SERVICE_HOST": "10.43.0.7", "MY_DB_SERVICE_PORT": "5432", "MY_DB_SERVICE_PORT_METRICS": "9187",
		"MY_DB_PORT": "tcp://10.43.0.7:5432", "MY_DB_PORT_5432_TCP": "tcp://10.43.0.7:5432", "MY_DB_PORT_5432_TCP_PROTO": "tcp",
		"MY_DB_PORT_5432_TCP_PORT": "5432", "MY_DB_PORT_5432_TCP_ADDR": "10.43.0.7",
		"MY_DB_PORT_9187_UDP": "udp://10.43.0.7:9187", "MY_DB_PORT_9187_UDP_PROTO": "udp",
		"MY_DB_PORT_9187_UDP_PORT": "9187", "MY_DB_PORT_9187_UDP_ADDR": "10.43.0.7",
	}
	for k, v := range kube {
		withDB[k] = v
	}
	cases := []struct {
		name  string
		links *bool
		want  map[string]string
	}{
		{"links default on", nil, withDB},
		{"links off keeps kubernetes", ptr.To(false), kube},
	}
	for _, tc := range cases {
		if got := ServiceEnv(services, "app", tc.links); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got  %v\n want %v", tc.name, got, tc.want)
		}
	}
}
