package join

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/httpstatus"
)

// maxBodyBytes bounds a node-certificate request (a CSR is < 1 KiB).
const maxBodyBytes = 64 << 10

// Signer is what the handler needs from the cluster CA (*pki.Bundle).
type Signer interface {
	CAPEM() []byte
	SignClientCSR(csrPEM []byte, cn string, orgs []string) ([]byte, error)
	SignServingCSR(csrPEM []byte, cn string, orgs []string, dnsNames []string, ips []net.IP) ([]byte, error)
}

var _ Signer = (*pki.Bundle)(nil)

// Config configures a Handler.
type Config struct {
	// CA signs node certificates and provides the CA PEM.
	CA Signer
	// Token is the cluster join token (full K10... token or bare secret);
	// only its secret is used.
	Token string
	// Logger is named "join" by New; nil means no logging.
	Logger *zap.Logger
	// Limits for failed authentication; zero values mean the defaults.
	Limits Limits
	// ServerBootstrap answers joining servers; nil = servers cannot join.
	ServerBootstrap func() (*ServerBootstrap, error)
	// AgentToken is the agent-only token of --agent-token (full or bare;
	// "" = none): it joins agents but cannot fetch ServerBootstrapPath.
	AgentToken string
	// BootstrapTokens reads kube-system's bootstrap token Secrets, which
	// are agent-only too; nil = bootstrap tokens are not accepted.
	BootstrapTokens SecretGetter
	// Now is the clock for token expiry; nil = time.Now.
	Now func() time.Time
}

// Handler serves /cacerts and /v1-orch/*. Create it with New.
type Handler struct {
	ca      Signer
	secret  string
	log     *zap.Logger
	limiter *failureLimiter
	// bootstrap answers ServerBootstrapPath.
	bootstrap func() (*ServerBootstrap, error)
	// agentSecret and tokens are the agent-only credentials.
	agentSecret string
	tokens      SecretGetter
	clock       func() time.Time
	// caPool verifies the client certificates of renewing nodes.
	caPool *x509.CertPool
}

var _ http.Handler = (*Handler)(nil)

// New checks cfg and builds a Handler.
func New(cfg Config) (*Handler, error) {
	if cfg.CA == nil {
		return nil, errors.New("join: Config.CA is required")
	}
	_, secret, err := pki.ParseToken(cfg.Token)
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	h := &Handler{ca: cfg.CA, secret: secret, log: log.Named("join"), limiter: newFailureLimiter(cfg.Limits),
		bootstrap: cfg.ServerBootstrap, tokens: cfg.BootstrapTokens, clock: cfg.Now, caPool: caPoolOf(cfg.CA.CAPEM())}
	if cfg.AgentToken != "" {
		if _, h.agentSecret, err = pki.ParseToken(cfg.AgentToken); err != nil {
			return nil, fmt.Errorf("join: agent token: %w", err)
		}
	}
	return h, nil
}

// Handles reports whether path is served by the join handler.
func Handles(path string) bool {
	return path == CACertsPath || strings.HasPrefix(path, PathPrefix)
}

// Wrap serves the join paths itself and passes every other request to next
// (the Kubernetes API handler with its authentication chain).
func (h *Handler) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Handles(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case CACertsPath:
		h.serveCACerts(w, r)
	case NodeCertificatePath:
		h.serveNodeCertificate(w, r)
	case ServerBootstrapPath:
		h.serveServerBootstrap(w, r)
	default:
		httpstatus.WriteStatus(w, apierrors.NewNotFound(schemaGR, r.URL.Path))
	}
}

func (h *Handler) serveCACerts(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		httpstatus.WriteStatus(w, methodNotAllowed(r, "GET"))
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(h.ca.CAPEM())
	}
}

func (h *Handler) serveNodeCertificate(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		httpstatus.WriteStatus(w, methodNotAllowed(r, "POST"))
		return
	}
	node, renewing, err := h.renewingNode(r)
	if err != nil {
		h.limiter.failed(clientIP(r))
		httpstatus.WriteStatus(w, apierrors.NewUnauthorized(err.Error()))
		return
	}
	if !renewing {
		if _, ok := h.authorized(w, r); !ok {
			return
		}
	}
	ip := clientIP(r)
	resp, err := h.issue(r, w, node)
	if err != nil {
		h.log.Info("node certificate request refused", zap.String("client", ip), zap.Error(err))
		httpstatus.WriteStatus(w, err)
		return
	}
	httpstatus.WriteJSON(w, http.StatusOK, resp)
}

// authorized checks the bearer secret under the failure rate limit,
// answers the refusal itself and else says what the token allows.
func (h *Handler) authorized(w http.ResponseWriter, r *http.Request) (role, bool) {
	ip := clientIP(r)
	if wait, ok := h.limiter.allowed(ip); !ok {
		h.log.Warn("join request rate limited after failed attempts", zap.String("client", ip))
		w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds())+1))
		httpstatus.WriteStatus(w, apierrors.NewTooManyRequests("too many failed join attempts from this address; retry later", int(wait.Seconds())+1))
		return 0, false
	}
	rl, err := h.checkSecret(r)
	if errors.Is(err, errTokenLookup) {
		h.log.Warn("join request not checked", zap.String("client", ip), zap.Error(err))
		httpstatus.WriteStatus(w, apierrors.NewServiceUnavailable(err.Error()))
		return 0, false
	}
	if err != nil {
		h.limiter.failed(ip)
		h.log.Warn("join request rejected", zap.String("client", ip), zap.Error(err))
		httpstatus.WriteStatus(w, apierrors.NewUnauthorized(err.Error()))
		return 0, false
	}
	return rl, true
}

// checkSecret checks the bearer secret (compared in constant time) and
// says what it allows. Its errors never contain the presented secret.
func (h *Handler) checkSecret(r *http.Request) (role, error) {
	given, err := bearer(r)
	if err != nil {
		return 0, err
	}
	return h.tokenRole(r.Context(), given)
}

// issue decodes and validates the request and signs the CSR.
// A renewing node (renewNode != "") may only ask for itself.
func (h *Handler) issue(r *http.Request, w http.ResponseWriter, renewNode string) (*NodeCertificateResponse, error) {
	var req NodeCertificateRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading request body: %v", err))
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("request body must be JSON {\"nodeName\", \"csrPEM\"}: %v", err))
	}
	if errs := validation.IsDNS1123Subdomain(req.NodeName); len(errs) > 0 {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("nodeName %q is not a valid node name: %s", req.NodeName, strings.Join(errs, "; ")))
	}
	if renewNode != "" && req.NodeName != renewNode {
		return nil, apierrors.NewForbidden(schemaGR, NodeCertificatePath,
			fmt.Errorf("node %q may renew only its own certificates, not those of %q", renewNode, req.NodeName))
	}
	ips, err := parseNodeIPs(req)
	if err != nil {
		return nil, err
	}
	certPEM, err := h.ca.SignClientCSR([]byte(req.CSRPEM), NodeUserPrefix+req.NodeName, []string{NodesGroup})
	if err != nil {
		if errors.Is(err, pki.ErrInvalidPEM) || errors.Is(err, pki.ErrInvalidSubject) {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("csrPEM: %v", err))
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("signing node certificate: %w", err))
	}
	servingPEM, err := h.signServing(req, ips)
	if err != nil {
		return nil, err
	}
	h.log.Info("issued node certificate", zap.String("node", req.NodeName), zap.String("client", clientIP(r)),
		zap.Bool("serving", servingPEM != nil), zap.Strings("nodeIPs", req.NodeIPs))
	return &NodeCertificateResponse{CertificatePEM: string(certPEM), CAPEM: string(h.ca.CAPEM()),
		ServingCertificatePEM: string(servingPEM)}, nil
}
