package join

import (
	"net/http"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orch/orch/server/httpstatus"
)

// ServerBootstrapPath is where a server joining as another control-plane
// server (orch server --server URL --token T) fetches the cluster's shared
// secrets, like k3s's /v1-k3s/server-bootstrap.
const ServerBootstrapPath = PathPrefix + "server-bootstrap"

// ServerBootstrap is the answer to POST ServerBootstrapPath: what every
// server of a cluster shares, and where to reach the Raft members.
type ServerBootstrap struct {
	// Files maps paths relative to <data-dir>/server (tls/ca.crt,
	// tls/ca.key, tls/front-proxy/ca.*, tls/service-account.key, ...) to
	// their contents. Keys: never log them.
	Files map[string][]byte `json:"files"`
	// RaftPeers are the Raft transport addresses of the current members.
	RaftPeers []string `json:"raftPeers"`
}

// serveServerBootstrap hands the shared secrets to a caller that knows the
// server token; agent-only tokens (--agent-token, bootstrap tokens) get 403.
func (h *Handler) serveServerBootstrap(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		httpstatus.WriteStatus(w, methodNotAllowed(r, "POST"))
		return
	}
	rl, ok := h.authorized(w, r)
	if !ok {
		return
	}
	if rl != roleServer {
		h.log.Warn("refused the cluster's shared secrets to an agent-only token", zap.String("client", clientIP(r)))
		httpstatus.WriteStatus(w, apierrors.NewForbidden(schemaGR, r.URL.Path, errServerOnly))
		return
	}
	if h.bootstrap == nil {
		httpstatus.WriteStatus(w, apierrors.NewNotFound(schemaGR, r.URL.Path))
		return
	}
	b, err := h.bootstrap()
	if err != nil {
		httpstatus.WriteStatus(w, apierrors.NewInternalError(err))
		return
	}
	h.log.Info("handed the cluster's shared secrets to a joining server", zap.String("client", clientIP(r)),
		zap.Strings("raftPeers", b.RaftPeers))
	httpstatus.WriteJSON(w, http.StatusOK, b)
}
