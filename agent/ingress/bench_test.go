package ingress

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// BenchmarkProxy measures keep-alive GETs through the ingress handler to a
// loopback backend; BenchmarkDirect the same GETs straight to the backend.
//
//	go test -run XXX -bench . ./agent/ingress/
func BenchmarkProxy(b *testing.B) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer backend.Close()
	_, port, _ := net.SplitHostPort(backend.Listener.Addr().String())
	var p int
	_, _ = fmt.Sscan(port, &p)
	svc, sl := service("web", "127.0.0.1")
	sl.Ports[0].Port = ptrInt32(int32(p))
	tab := Build(Inputs{Ingresses: []*networkingv1.Ingress{newIngress("a", 1, rule{"a.test", []networkingv1.HTTPIngressPath{path(prefix, "/", "web")}})},
		Services: []*corev1.Service{svc}, Slices: []*discoveryv1.EndpointSlice{sl}})
	front := httptest.NewServer(newHandler(func() *Table { return tab }, zap.NewNop()))
	defer front.Close()
	run(b, front.URL, "a.test")
}

func BenchmarkDirect(b *testing.B) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer backend.Close()
	run(b, backend.URL, "")
}

func ptrInt32(v int32) *int32 { return &v }

func run(b *testing.B, url, host string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Host = host
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}
