package apiserver

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/internal/metrics"
)

// serveNonResource serves the paths that are not resource requests:
// discovery (/api, /apis, ...), /version, /healthz, /livez, /readyz, the
// OpenAPI documents and /metrics (with FlowControl). It returns false for any other path.
func (s *Server) serveNonResource(w http.ResponseWriter, r *http.Request) bool {
	p := strings.TrimSuffix(r.URL.Path, "/")
	var h func(http.ResponseWriter, *http.Request) error
	switch {
	case p == "/version":
		h = s.serveVersion
	case p == "/healthz" || p == "/livez" || p == "/readyz" ||
		strings.HasPrefix(p, "/healthz/") || strings.HasPrefix(p, "/livez/") || strings.HasPrefix(p, "/readyz/"):
		h = s.serveHealth
	case p == "/openapi/v2" || p == "/openapi/v3" || strings.HasPrefix(p, "/openapi/v3/"):
		h = s.serveOpenAPI
	case p == "/api" || p == "/apis" || strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/"):
		h = s.serveDiscovery
	case (p == "/.well-known/openid-configuration" || p == "/openid/v1/jwks") && s.cfg.OIDC != nil:
		h = s.serveOIDC
	case p == "/metrics" && (s.cfg.FlowControl != nil || s.cfg.Metrics != nil):
		h = s.serveMetrics
	default:
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.writeError(w, r, methodNotAllowed(r.Method, p))
		return true
	}
	if err := h(w, r); err != nil {
		s.writeError(w, r, err)
	}
	return true
}

func methodNotAllowed(method, path string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed,
		Reason:  metav1.StatusReasonMethodNotAllowed,
		Message: "the server does not allow method " + method + " on path " + path + "; only GET is supported",
	}}
}

// serveMetrics serves Config.Metrics (which includes FlowControl's), or
// without it FlowControl's metrics alone, in the Prometheus text format.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Metrics != nil {
		metrics.Handler(s.cfg.Metrics).ServeHTTP(w, r)
		return nil
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	return s.cfg.FlowControl.WriteMetrics(w)
}

// serveOIDC serves the ServiceAccount issuer discovery documents.
func (s *Server) serveOIDC(w http.ResponseWriter, r *http.Request) error {
	body, ct := s.cfg.OIDC.Config, "application/json"
	if strings.HasPrefix(r.URL.Path, "/openid/") {
		body, ct = s.cfg.OIDC.JWKS, "application/jwk-set+json"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}
