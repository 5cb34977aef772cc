package apiserver

import (
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestProxyRequestInfo: the path after <name>/proxy is the backend path
// (trailing slash kept); authorization sees pods/proxy and the full name.
func TestProxyRequestInfo(t *testing.T) {
	for _, c := range []struct{ method, url, verb, name, path string }{
		{"GET", "/api/v1/namespaces/ns/pods/web/proxy", "get", "web", ""},
		{"GET", "/api/v1/namespaces/ns/pods/web:8080/proxy/", "get", "web:8080", ""},
		{"POST", "/api/v1/namespaces/ns/pods/https:web:443/proxy/a/b/", "create", "https:web:443", "/a/b/"},
		{"DELETE", "/api/v1/namespaces/ns/pods/web/proxy/x", "delete", "web", "/x"},
	} {
		info := parseRequestInfo(httptest.NewRequest(c.method, c.url, nil))
		if info.extraParts || info.Subresource != "proxy" || info.Verb != c.verb || info.Name != c.name || info.proxyPath != c.path {
			t.Errorf("%s %s: %+v", c.method, c.url, info)
		}
	}
	if info := parseRequestInfo(httptest.NewRequest("GET", "/api/v1/namespaces/ns/pods/web/log/x", nil)); !info.extraParts {
		t.Error("extra segments after another subresource must stay unserved")
	}
}

// TestPodProxyTarget: the port is the given one, else the first declared;
// only global unicast pod IPs are proxied to.
func TestPodProxyTarget(t *testing.T) {
	pod := func(ip string, ports ...int32) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{PodIP: ip}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}
		for _, n := range ports {
			p.Spec.Containers[1].Ports = append(p.Spec.Containers[1].Ports, corev1.ContainerPort{ContainerPort: n})
		}
		return p
	}
	for _, c := range []struct {
		pod          *corev1.Pod
		scheme, port string
		want         string
	}{
		{pod("10.42.0.5", 9376, 80), "", "", "http://10.42.0.5:9376"},
		{pod("10.42.0.5", 9376), "https", "443", "https://10.42.0.5:443"},
		{pod("10.42.0.5"), "", "", "http://10.42.0.5"},
		{pod("fd00::5", 80), "", "", "http://[fd00::5]:80"},
		{pod("fd00::5"), "", "", "http://[fd00::5]"},
		{pod(""), "", "80", "error"},
		{pod("127.0.0.1"), "", "80", "error"},
		{pod("169.254.1.1"), "", "80", "error"},
	} {
		got := "error"
		if u, err := podProxyTarget(c.pod, c.scheme, c.port); err == nil {
			got = u.String()
		}
		if got != c.want {
			t.Errorf("%s %q %q: %s, want %s", c.pod.Status.PodIP, c.scheme, c.port, got, c.want)
		}
	}
}
