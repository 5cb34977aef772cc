package snapshots

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"slices"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/internal/pki"
)

// Path is the endpoint `orch etcd-snapshot save` posts to.
const Path = "/v1-orch/snapshots"

// AdminGroup is the organization a client certificate needs.
const AdminGroup = pki.AdminGroup

// SaveRequest is the body of a POST to Path.
type SaveRequest struct {
	// Name is the snapshot name prefix (default OnDemandName).
	Name string `json:"name,omitempty"`
	// Dir overrides the server's snapshot directory.
	Dir string `json:"dir,omitempty"`
}

// Handler serves Path for clients with a cluster-CA client certificate of
// the system:masters group; other requests go to the wrapped handler.
type Handler struct {
	store Saver
	dir   string
	node  string
	roots *x509.CertPool
	log   *zap.Logger
}

// NewHandler saves snapshots of store into dir, named after node.
func NewHandler(store Saver, dir, node string, roots *x509.CertPool, log *zap.Logger) *Handler {
	return &Handler{store: store, dir: dir, node: node, roots: roots, log: log}
}

// Wrap serves Path itself and everything else with next.
func (h *Handler) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Path {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if code, msg := h.authorize(r); code != 0 {
		writeStatus(w, code, msg)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeStatus(w, http.StatusMethodNotAllowed, "only POST is allowed")
		return
	}
	var req SaveRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		writeStatus(w, http.StatusBadRequest, "bad request body: "+err.Error())
		return
	}
	info, code, err := h.save(r.Context(), req)
	if err != nil {
		h.log.Warn("on-demand datastore snapshot failed", zap.Error(err))
		writeStatus(w, code, err.Error())
		return
	}
	h.log.Info("saved on-demand datastore snapshot", zap.String("name", info.Name),
		zap.Int64("revision", info.Revision), zap.Int64("size", info.Size))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(info)
}

func (h *Handler) save(ctx context.Context, req SaveRequest) (Info, int, error) {
	name, dir := req.Name, h.dir
	if name == "" {
		name = OnDemandName
	}
	if err := ValidateName(name); err != nil {
		return Info{}, http.StatusBadRequest, err
	}
	if req.Dir != "" {
		if !filepath.IsAbs(req.Dir) {
			return Info{}, http.StatusBadRequest, errors.New("snapshot dir must be an absolute path")
		}
		dir = req.Dir
	}
	info, err := Save(ctx, h.store, dir, name, h.node)
	if err != nil {
		return Info{}, http.StatusInternalServerError, err
	}
	return info, 0, nil
}

// authorize returns 401 without a client certificate of the cluster CA and
// 403 for one outside AdminGroup.
func (h *Handler) authorize(r *http.Request) (int, string) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return http.StatusUnauthorized, "a client certificate is required"
	}
	leaf := r.TLS.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: h.roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return http.StatusUnauthorized, "the client certificate is not signed by the cluster CA"
	}
	if !slices.Contains(leaf.Subject.Organization, AdminGroup) {
		return http.StatusForbidden, "user " + leaf.Subject.CommonName + " may not save datastore snapshots (needs group " + AdminGroup + ")"
	}
	return 0, ""
}

// writeStatus answers with a Kubernetes metav1.Status.
func writeStatus(w http.ResponseWriter, code int, msg string) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Code: int32(code), Reason: reasonFor(code),
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

func reasonFor(code int) metav1.StatusReason {
	switch code {
	case http.StatusUnauthorized:
		return metav1.StatusReasonUnauthorized
	case http.StatusForbidden:
		return metav1.StatusReasonForbidden
	case http.StatusBadRequest:
		return metav1.StatusReasonBadRequest
	case http.StatusMethodNotAllowed:
		return metav1.StatusReasonMethodNotAllowed
	}
	return metav1.StatusReasonInternalError
}
