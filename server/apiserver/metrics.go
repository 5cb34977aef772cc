package apiserver

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// MetricsRegistry is where the API server registers its request metrics
// and what /metrics serves (internal/metrics.NewRegistry).
type MetricsRegistry interface {
	prometheus.Registerer
	prometheus.Gatherer
}

// requestMetrics are kube-apiserver's request metrics under its names and
// labels (k8s.io/apiserver/pkg/endpoints/metrics). Label values are
// bounded: verbs are upstream's canonical ones, group/version/resource
// only those the server serves (built-in, custom or aggregated),
// subresources from a fixed list and non-resource paths collapsed to a
// fixed set; anything else is "" or "other".
type requestMetrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inflight *prometheus.GaugeVec
}

var requestLabels = []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}

func newRequestMetrics(reg prometheus.Registerer) (*requestMetrics, error) {
	m := &requestMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "apiserver", Name: "request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code."},
			append(append([]string(nil), requestLabels...), "code")),
		// upstream's buckets (the request latency SLO uses them)
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "apiserver", Name: "request_duration_seconds",
			Help: "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
				4, 5, 6, 8, 10, 15, 20, 30, 45, 60}}, requestLabels),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "apiserver", Name: "current_inflight_requests",
			Help: "Number of requests of each kind (readOnly, mutating) being served now, long-running ones (watch, connect) excluded."},
			[]string{"request_kind"}),
	}
	for _, c := range []prometheus.Collector{m.total, m.duration, m.inflight} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// metricLabels are the label values of one request.
type metricLabels struct {
	verb, dryRun, group, version, resource, subresource, scope string
}

// begin counts a request in flight; the returned func records it.
func (m *requestMetrics) begin(r *http.Request, info *requestInfo) (kind string) {
	if m == nil || info.Verb == "watch" || connectSubresources[info.Subresource] {
		return ""
	}
	kind = "mutating"
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		kind = "readOnly"
	}
	m.inflight.WithLabelValues(kind).Inc()
	return kind
}

// observe records a finished request.
func (m *requestMetrics) observe(kind string, l metricLabels, code int, took time.Duration) {
	if m == nil {
		return
	}
	if kind != "" {
		m.inflight.WithLabelValues(kind).Dec()
	}
	v := []string{l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope, "apiserver"}
	m.duration.WithLabelValues(v...).Observe(took.Seconds())
	m.total.WithLabelValues(append(v, strconv.Itoa(code))...).Inc()
}

// connectSubresources are reported with verb CONNECT, as upstream does.
var connectSubresources = map[string]bool{"log": true, "exec": true, "portforward": true, "attach": true, "proxy": true}

// knownSubresources bounds the subresource label.
var knownSubresources = map[string]bool{"status": true, "scale": true, "binding": true, "eviction": true,
	"log": true, "exec": true, "attach": true, "portforward": true, "proxy": true, "ephemeralcontainers": true,
	"resize": true, "token": true, "approval": true, "finalize": true}

// nonResourcePaths are the non-resource paths reported as themselves (in
// the subresource label, as upstream); sub-paths of those ending in "/"
// collapse to the prefix, anything else to "other".
var nonResourcePaths = []string{"/version", "/metrics", "/healthz", "/livez", "/readyz", "/api", "/apis",
	"/openapi/v2", "/openapi/v3", "/.well-known/openid-configuration", "/openid/v1/jwks"}

var upperVerbs = map[string]string{"get": "GET", "list": "LIST", "watch": "WATCH", "create": "POST", "update": "PUT",
	"patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETECOLLECTION"}

// labelsOf computes the bounded labels of a request; known says whether
// its group, version and resource are served.
func labelsOf(r *http.Request, info *requestInfo, known bool) metricLabels {
	l := metricLabels{dryRun: dryRunLabel(r)}
	if !info.IsResource {
		l.verb = nonResourceVerb(r.Method)
		l.subresource = nonResourcePath(info.Path)
		return l
	}
	l.verb = upperVerbs[info.Verb]
	switch {
	case connectSubresources[info.Subresource]:
		l.verb = "CONNECT"
	case l.verb == "PATCH" && r.Header.Get("Content-Type") == string(types.ApplyPatchType):
		l.verb = "APPLY"
	case l.verb == "":
		l.verb = "other"
	}
	switch {
	case info.Name != "" || info.Verb == "create":
		l.scope = "resource"
	case info.Namespace != "":
		l.scope = "namespace"
	default:
		l.scope = "cluster"
	}
	if !known {
		return l
	}
	l.group, l.version, l.resource = info.APIGroup, info.APIVersion, info.Resource
	if info.Subresource != "" {
		l.subresource = "other"
		if knownSubresources[info.Subresource] {
			l.subresource = info.Subresource
		}
	}
	return l
}

func nonResourceVerb(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "GET"
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return method
	}
	return "other"
}

func nonResourcePath(p string) string {
	p = strings.TrimSuffix(p, "/")
	for _, k := range nonResourcePaths {
		if p == k || strings.HasPrefix(p, k+"/") {
			return k
		}
	}
	return "other"
}

// dryRunLabel is "" or "All" (the only valid dryRun value), else "invalid".
func dryRunLabel(r *http.Request) string {
	if !strings.Contains(r.URL.RawQuery, "dryRun") {
		return ""
	}
	v := r.URL.Query()["dryRun"]
	for _, d := range v {
		if d != "All" {
			return "invalid"
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "All"
}

// servedResource says whether a resource request names a resource this
// server serves (its labels are then kept).
func (s *Server) servedResource(info *requestInfo, aggregated bool) bool {
	if !info.IsResource {
		return false
	}
	return aggregated || s.lookup(info.groupVersionResource()) != nil
}
