package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/aggregator"
	"github.com/orch/orch/server/controllers/apiservice"
	"github.com/orch/orch/server/registry/apiregistration"
)

func TestAggregatedProxyThroughAPIServer(t *testing.T) {
	ctx := context.Background()
	bundle, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), pki.Options{Hostname: "h", Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != pki.FrontProxyClientName {
			http.Error(w, "no front-proxy cert", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/apis/fake.io/v1" {
			_, _ = io.WriteString(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"fake.io/v1","resources":[{"name":"things","singularName":"thing","namespaced":true,"kind":"Thing","verbs":["get","list"]}]}`)
			return
		}
		_, _ = io.WriteString(w, `{"user":"`+r.Header.Get("X-Remote-User")+`","path":"`+r.URL.Path+`"}`)
	}))
	backend.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	backend.StartTLS()
	defer backend.Close()
	bu, _ := url.Parse(backend.URL)
	bport, _ := strconv.Atoi(bu.Port())

	cert, err := bundle.FrontProxyClientCert()
	if err != nil {
		t.Fatal(err)
	}
	proxy := &aggregator.Proxy{ClientCert: cert, Log: zaptest.NewLogger(t)}
	s, _ := newMetaTestServer(t, func(c *Config) { c.Aggregator = proxy })
	cfg := &rest.Config{Host: "http://orch-loopback", Transport: s.LoopbackTransport()}
	cs := kubernetes.NewForConfigOrDie(cfg)
	proxy.Resolver = aggregator.EndpointResolver{Client: cs}
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Services("kube-system").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "fake"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name, port := "https", int32(bport)
	_, err = cs.DiscoveryV1().EndpointSlices("kube-system").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "fake-1", Labels: map[string]string{discoveryv1.LabelServiceName: "fake"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	get := func() (int, string) {
		body, err := cs.CoreV1().RESTClient().Get().AbsPath("/apis/fake.io/v1/things").DoRaw(ctx)
		if se := apierrors.APIStatus(nil); errors.As(err, &se) {
			return int(se.Status().Code), string(body)
		} else if err != nil {
			return 0, err.Error()
		}
		return 200, string(body)
	}
	if code, _ := get(); code != http.StatusNotFound {
		t.Fatalf("before the APIService: %d", code)
	}
	a := &apiregistration.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.fake.io"}, Spec: apiregistration.APIServiceSpec{
		Group: "fake.io", Version: "v1", GroupPriorityMinimum: 100, VersionPriority: 100, InsecureSkipTLSVerify: true,
		Service: &apiregistration.ServiceReference{Namespace: "kube-system", Name: "fake"}}}
	if err := cs.CoreV1().RESTClient().Post().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices").Body([]byte(mustJSON(t, a))).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	if code, body := get(); code != 200 || body != `{"user":"system:apiserver","path":"/apis/fake.io/v1/things"}` {
		t.Fatalf("proxied: %d %s", code, body)
	}
	for _, path := range []string{"/apis", "/apis/fake.io"} {
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
		if err != nil || !strings.Contains(string(raw), `"groupVersion":"fake.io/v1"`) {
			t.Fatalf("legacy discovery %s lacks fake.io/v1: %v %s", path, err, raw)
		}
	}
	ctrl := &apiservice.Controller{Client: cs.CoreV1().RESTClient(), Proxy: proxy, Log: zaptest.NewLogger(t)}
	wantAvailable(t, s, ctrl, "True (Passed)")
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/apis").SetHeader("Accept", aggregatedMediaType).DoRaw(ctx)
	if err != nil || !strings.Contains(string(raw), `"resource":"things"`) {
		t.Fatalf("aggregated discovery lacks fake.io things: %v %s", err, raw)
	}
	backend.Close()
	if code, body := get(); code != http.StatusServiceUnavailable {
		t.Fatalf("backend down: %d %s", code, body)
	}
	wantAvailable(t, s, ctrl, "False (FailedDiscoveryCheck)")
	if err := cs.DiscoveryV1().EndpointSlices("kube-system").Delete(ctx, "fake-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantAvailable(t, s, ctrl, "False (MissingEndpoints)")
	if err := cs.CoreV1().Services("kube-system").Delete(ctx, "fake", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantAvailable(t, s, ctrl, "False (ServiceNotFound)")
}

func wantAvailable(t *testing.T, s *Server, ctrl *apiservice.Controller, want string) {
	t.Helper()
	if err := ctrl.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	var a apiregistration.APIService
	metaGetStored(t, s, apiregistration.GroupName, "apiservices", "", "v1.fake.io", &a)
	got := apiregistration.AvailableCell(&a)
	if got == "True" {
		got += " (" + a.Status.Conditions[0].Reason + ")"
	}
	if got != want {
		t.Fatalf("Available = %s, want %s (%+v)", got, want, a.Status)
	}
}
