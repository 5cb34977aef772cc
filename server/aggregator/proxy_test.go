package aggregator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry/apiregistration"
)

type fixedResolver struct{ u *url.URL }

func (f fixedResolver) ResolveEndpoint(context.Context, string, string, int32) (*url.URL, error) {
	return f.u, nil
}

func TestProxyForwardsIdentity(t *testing.T) {
	bundle, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), pki.Options{Hostname: "h", Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	fpPool := x509.NewCertPool()
	fpPool.AppendCertsFromPEM(bundle.FrontProxyCAPEM())
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "front-proxy-client" {
			http.Error(w, "no front-proxy client cert", http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Remote-User") != "alice" ||
			strings.Join(r.Header.Values("X-Remote-Group"), ",") != "dev,system:authenticated" {
			http.Error(w, "bad headers: "+r.Header.Get("Authorization")+r.Header.Get("X-Remote-User"), http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	}))
	backend.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: fpPool}
	backend.StartTLS()
	defer backend.Close()
	u, _ := url.Parse(backend.URL)
	cert, err := bundle.FrontProxyClientCert()
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Resolver: fixedResolver{u}, ClientCert: cert, Log: zaptest.NewLogger(t)}
	a := apiregistration.APIService{Spec: apiregistration.APIServiceSpec{InsecureSkipTLSVerify: true,
		Service: &apiregistration.ServiceReference{Namespace: "ns", Name: "svc"}}}

	do := func(a *apiregistration.APIService) (int, string) {
		r := httptest.NewRequest("GET", "/apis/x.io/v1/things?limit=1", nil)
		r.Header.Set("Authorization", "Bearer secret")
		r.Header.Set("X-Remote-User", "mallory")
		r = r.WithContext(auth.WithUser(r.Context(), &auth.User{Name: "alice", Groups: []string{"dev", "system:authenticated"}}))
		w := httptest.NewRecorder()
		p.Serve(w, r, a)
		return w.Code, w.Body.String()
	}
	if code, body := do(&a); code != 200 || body != "GET /apis/x.io/v1/things?limit=1" {
		t.Fatalf("proxied: %d %s", code, body)
	}
	// A caBundle that did not sign the backend's certificate: 503.
	b := a
	b.Spec.InsecureSkipTLSVerify, b.Spec.CABundle = false, bundle.CAPEM()
	if code, body := do(&b); code != http.StatusServiceUnavailable || !strings.Contains(body, "ServiceUnavailable") {
		t.Fatalf("unverified backend: %d %s", code, body)
	}
	// Backend down: 503.
	backend.Close()
	if code, _ := do(&a); code != http.StatusServiceUnavailable {
		t.Fatalf("backend down: %d", code)
	}
}
