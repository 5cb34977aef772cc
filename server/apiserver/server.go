package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/fieldmanager"
	"github.com/orch/orch/server/openapi"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/all"
)

// DefaultMaxRequestBodyBytes is the request body limit when Config leaves it 0.
const DefaultMaxRequestBodyBytes = 3 << 20

// Config holds what the API server needs.
type Config struct {
	Store               datastore.Store
	Resources           []*registry.Resource
	Scheme              *runtime.Scheme // nil = all.NewScheme()
	Authenticator       auth.Authenticator
	Authorizer          auth.Authorizer
	Logger              *zap.Logger
	MaxRequestBodyBytes int64        // 0 = DefaultMaxRequestBodyBytes
	Ready               func() error // readiness of the backing store; nil = always ready
	AdvertiseAddress    net.IP
	// EndpointIPs, when set, lists the live API servers of a cluster of
	// several (sorted); the kubernetes Service's endpoints follow it.
	EndpointIPs func(ctx context.Context) []net.IP
	SecurePort  int
	ServiceCIDR *net.IPNet
	ClusterDNS  net.IP // the kube-dns Service's ClusterIP; nil = the 10th address of ServiceCIDR
	Version     version.Info
	// KubeletClientTLS is the client TLS (kubelet-client certificate and the
	// cluster CA) for proxying pods/log, exec, attach and portforward to node
	// agents; nil = those answer 503.
	KubeletClientTLS *tls.Config
	// Admission is the admission chain every create, update and delete
	// passes; nil admits everything.
	Admission *admission.Chain
	// ExtensionAuth, when set, is kept in kube-system's
	// extension-apiserver-authentication ConfigMap by Bootstrap.
	ExtensionAuth *ExtensionAuth
	// Aggregator, when set, proxies groups of non-local APIServices.
	Aggregator Aggregator
	// TokenIssuer signs ServiceAccount tokens (serviceaccounts/token);
	// APIAudiences are the audiences the API server accepts, the default of
	// a TokenRequest. nil = the subresource answers 503.
	TokenIssuer  TokenIssuer
	APIAudiences []string
	// Virtual are resources that are never stored: create-only (review
	// APIs) or read-only (metrics.k8s.io).
	Virtual []Virtual
	// Dynamic, when set, serves resources added at run time (custom
	// resources) after the static ones.
	Dynamic DynamicResources
	// OIDC holds the ServiceAccount issuer discovery documents served at
	// /.well-known/openid-configuration and /openid/v1/jwks (nil: 404).
	OIDC *OIDCDocuments
	// FlowControl, when set, classifies every authenticated request for
	// API Priority and Fairness and serves /metrics.
	FlowControl FlowControl
	// Metrics, when set, gets the request metrics (apiserver_request_*)
	// and is what /metrics serves (authorized as the non-resource URL).
	Metrics MetricsRegistry
}

// FlowControl is API Priority and Fairness as far as the API server needs
// it (server/apf.Classifier): requests are classified, not throttled.
type FlowControl interface {
	// ResponseHeaders sets the X-Kubernetes-PF-* headers of a request.
	ResponseHeaders(a *auth.Attributes, h http.Header)
	// WriteMetrics writes the metrics served on /metrics.
	WriteMetrics(w io.Writer) error
}

// OIDCDocuments are the OpenID provider configuration and key set.
type OIDCDocuments struct {
	Config, JWKS []byte
}

// Server is the Kubernetes REST handler. Create it with New.
type Server struct {
	cfg       Config
	log       *zap.Logger
	store     datastore.Store
	scheme    *runtime.Scheme
	resources []*registry.Resource
	// byGVR finds the Resource of a group, version and plural name.
	byGVR map[schema.GroupVersionResource]*registry.Resource
	// fields keeps managedFields and performs server-side apply.
	fields *fieldmanager.Managers
	// namespaces is the core v1 namespaces resource (nil when not served).
	namespaces *registry.Resource
	// nsTerminating caches namespaces' terminating state for creates.
	nsTerminating terminatingCache
	dec           decoders
	handler       http.Handler
	kubelet       *kubeletClient  // nil without Config.KubeletClientTLS
	podProxy      *http.Transport // pods/proxy to pod IPs
	virtual       map[schema.GroupVersionResource]Virtual
	// specs are the embedded OpenAPI documents (their index decoded once).
	specs   *openapi.Specs
	v3Paths v3PathsMemo
	// openapiV2 is /openapi/v2 with the custom resources merged in.
	openapiV2 *openapi.V2Cache
	metrics   *requestMetrics // nil without Config.Metrics
}

// New checks cfg and builds a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("apiserver: Config.Store is required")
	}
	if cfg.Authenticator == nil || cfg.Authorizer == nil {
		return nil, errors.New("apiserver: Config.Authenticator and Config.Authorizer are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Scheme == nil {
		cfg.Scheme = all.NewScheme()
	}
	if cfg.MaxRequestBodyBytes <= 0 {
		cfg.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	s := &Server{specs: openapi.New(), openapiV2: &openapi.V2Cache{},
		cfg:       cfg,
		log:       cfg.Logger.Named("apiserver"),
		store:     cfg.Store,
		scheme:    cfg.Scheme,
		resources: cfg.Resources,
		byGVR:     make(map[schema.GroupVersionResource]*registry.Resource, len(cfg.Resources)),
	}
	all := cfg.Resources
	for _, v := range cfg.Virtual {
		all = append(all, v.Resource)
	}
	s.resources = all
	s.virtual = virtualIndex(cfg.Virtual)
	for _, r := range all {
		if r == nil || r.Strategy == nil || r.New == nil || r.NewList == nil {
			return nil, fmt.Errorf("apiserver: resource %v is incomplete (needs Strategy, New, NewList)", r)
		}
		gvr := r.GroupVersion.WithResource(r.Resource)
		if _, dup := s.byGVR[gvr]; dup {
			return nil, fmt.Errorf("apiserver: resource %s registered twice", gvr)
		}
		s.byGVR[gvr] = r
		if gvr == (schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}) {
			s.namespaces = r
		}
	}
	if cfg.Metrics != nil {
		m, err := newRequestMetrics(cfg.Metrics)
		if err != nil {
			return nil, fmt.Errorf("apiserver: request metrics: %w", err)
		}
		s.metrics = m
	}
	s.dec = newDecoders(cfg.Scheme)
	s.fields = fieldmanager.New(cfg.Scheme)
	s.kubelet = newKubeletClient(cfg.KubeletClientTLS)
	s.podProxy = newPodProxyTransport()
	s.handler = http.HandlerFunc(s.serveHTTP)
	return s, nil
}

// Handler returns the HTTP handler serving the whole API.
func (s *Server) Handler() http.Handler { return s.handler }
