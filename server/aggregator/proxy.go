package aggregator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"go.uber.org/zap"

	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry/apiregistration"
)

// ServiceResolver finds a reachable address (host:port) of a Service port.
type ServiceResolver interface {
	ResolveEndpoint(ctx context.Context, namespace, name string, port int32) (*url.URL, error)
}

// Proxy forwards requests to the backend of one APIService.
type Proxy struct {
	Resolver   ServiceResolver
	ClientCert tls.Certificate // front-proxy-client
	// GetClientCert, when set, is used instead of ClientCert (a renewed
	// front-proxy-client certificate is presented without a restart).
	GetClientCert func(*tls.CertificateRequestInfo) (*tls.Certificate, error)
	Log           *zap.Logger
}

// Transport builds the TLS transport for svc: verified by its caBundle for
// <svc>.<ns>.svc unless insecureSkipTLSVerify.
func (p *Proxy) Transport(a *apiregistration.APIService) (*http.Transport, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{p.ClientCert}, GetClientCertificate: p.GetClientCert}
	switch {
	case a.Spec.InsecureSkipTLSVerify:
		cfg.InsecureSkipVerify = true //nolint:gosec // requested by the APIService, as upstream
	default:
		pool := x509.NewCertPool()
		if len(a.Spec.CABundle) > 0 && !pool.AppendCertsFromPEM(a.Spec.CABundle) {
			return nil, fmt.Errorf("APIService %s: caBundle holds no certificate", a.Name)
		}
		cfg.RootCAs = pool
		cfg.ServerName = a.Spec.Service.Name + "." + a.Spec.Service.Namespace + ".svc"
	}
	return &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: false}, nil
}

// Serve proxies r to the backend of a; the caller has authenticated and
// authorized r (the user is in its context).
func (p *Proxy) Serve(w http.ResponseWriter, r *http.Request, a *apiregistration.APIService) {
	if a.Spec.Service == nil {
		unavailable(w, fmt.Sprintf("APIService %s is local", a.Name))
		return
	}
	port := int32(443)
	if a.Spec.Service.Port != nil {
		port = *a.Spec.Service.Port
	}
	target, err := p.Resolver.ResolveEndpoint(r.Context(), a.Spec.Service.Namespace, a.Spec.Service.Name, port)
	if err != nil {
		unavailable(w, fmt.Sprintf("service unavailable: %v", err))
		return
	}
	tr, err := p.Transport(a)
	if err != nil {
		unavailable(w, err.Error())
		return
	}
	defer tr.CloseIdleConnections()
	user, _ := auth.UserFrom(r.Context())
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path, pr.Out.URL.RawPath = r.URL.Path, r.URL.RawPath
			setIdentity(pr.Out.Header, user)
		},
		Transport:     tr,
		FlushInterval: -1, // stream watches
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			p.Log.Info("aggregated API backend failed", zap.String("apiservice", a.Name), zap.Error(err))
			unavailable(w, fmt.Sprintf("error trying to reach service: %v", err))
		},
	}
	rp.ServeHTTP(w, r)
}

// setIdentity strips the client's credentials and identity headers and
// sets the authenticated user's.
func setIdentity(h http.Header, u *auth.User) {
	h.Del("Authorization")
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-remote-") || strings.HasPrefix(strings.ToLower(k), "impersonate-") {
			h.Del(k)
		}
	}
	if u == nil {
		return
	}
	h.Set("X-Remote-User", u.Name)
	for _, g := range u.Groups {
		h.Add("X-Remote-Group", g)
	}
	if u.UID != "" {
		h.Set("X-Remote-Uid", u.UID)
	}
}

func unavailable(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	m, _ := json.Marshal(msg)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%s,"reason":"ServiceUnavailable","code":503}`, m)
}
