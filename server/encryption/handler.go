package encryption

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/httpstatus"
)

// The endpoints of `orch secrets-encrypt`, served on the API port.
const (
	PathPrefix    = "/v1-orch/secrets-encrypt/"
	StatusPath    = PathPrefix + "status"
	RotateKeyPath = PathPrefix + "rotate-keys"
	ReencryptPath = PathPrefix + "reencrypt"
)

// AdminGroup may use the endpoints (the admin client certificate's group).
const AdminGroup = "system:masters"

var pathsGR = schema.GroupResource{Resource: "paths"}

// Handler serves the secrets-encrypt endpoints to clients whose
// certificate from the cluster CA is in group system:masters.
type Handler struct {
	m     *Manager
	authn auth.Authenticator
	log   *zap.Logger
}

// NewHandler serves m; authn should accept only client certificates of the
// cluster CA (auth.NewCertAuthenticator).
func NewHandler(m *Manager, authn auth.Authenticator, log *zap.Logger) *Handler {
	if log == nil {
		log = zap.NewNop()
	}
	return &Handler{m: m, authn: authn, log: log}
}

// Wrap serves the secrets-encrypt paths itself and passes every other
// request to next. Mount it outside the join handler, which claims all of
// /v1-orch/.
func (h *Handler) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, PathPrefix) {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.authorize(r); err != nil {
		httpstatus.WriteStatus(w, err)
		return
	}
	var (
		resp any
		err  error
	)
	switch r.URL.Path {
	case StatusPath:
		if err = method(r, http.MethodGet); err == nil {
			resp, err = h.m.Status()
		}
	case RotateKeyPath:
		if err = method(r, http.MethodPost); err == nil {
			resp, err = h.m.RotateKeysCluster(r.Context())
		}
	case InstallPath:
		if err = method(r, http.MethodPost); err == nil {
			err = h.install(r)
			resp = map[string]string{"installed": "ok"}
		}
	case ReencryptPath:
		if err = method(r, http.MethodPost); err == nil {
			resp, err = h.m.Reencrypt(r.Context())
		}
	default:
		err = apierrors.NewNotFound(pathsGR, r.URL.Path)
	}
	if err != nil {
		if errors.Is(err, ErrDisabled) {
			err = apierrors.NewBadRequest(err.Error())
		}
		h.log.Warn("secrets-encrypt request failed", zap.String("path", r.URL.Path), zap.Error(err))
		httpstatus.WriteStatus(w, err)
		return
	}
	httpstatus.WriteJSON(w, http.StatusOK, resp)
}

func (h *Handler) authorize(r *http.Request) error {
	u, ok, err := h.authn.AuthenticateRequest(r)
	if err != nil {
		return apierrors.NewUnauthorized(err.Error())
	}
	if !ok {
		return apierrors.NewUnauthorized("secrets-encrypt needs the admin client certificate (<data-dir>/server/tls/admin.crt)")
	}
	if !slices.Contains(u.Groups, AdminGroup) {
		return apierrors.NewForbidden(pathsGR, r.URL.Path, fmt.Errorf("user %q is not in group %s", u.Name, AdminGroup))
	}
	return nil
}

func method(r *http.Request, want string) error {
	if r.Method == want {
		return nil
	}
	return apierrors.NewMethodNotSupported(pathsGR, fmt.Sprintf("%s on %s (allowed: %s)", r.Method, r.URL.Path, want))
}

// install installs a config pushed by another server of the cluster.
func (h *Handler) install(r *http.Request) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("reading the config: %v", err))
	}
	if err := h.m.Install(data); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("installing the pushed config: %v", err))
	}
	h.log.Info("installed an encryption config pushed by another server")
	return nil
}
