package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/auth"
)

// serveHTTP is the request flow: authenticate, authorize, then serve a
// non-resource path or a resource request.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	info := parseRequestInfo(r)
	kind, aggregated := s.metrics.begin(r, info), false
	defer func() {
		s.metrics.observe(kind, labelsOf(r, info, s.servedResource(info, aggregated)), rec.code, time.Since(start))
		s.log.Debug("request", zap.String("method", r.Method), zap.String("path", r.URL.Path),
			zap.String("verb", info.Verb), zap.Int("code", rec.code), zap.Duration("took", time.Since(start)),
			zap.String("userAgent", r.UserAgent()))
	}()
	user, err := s.authenticate(r)
	if err != nil {
		s.log.Debug("authentication failed", zap.Error(err))
		s.writeError(rec, r, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	if user, err = s.impersonate(r, user); err != nil {
		s.writeError(rec, r, err)
		return
	}
	r = r.WithContext(auth.WithUser(r.Context(), user))
	if fc := s.cfg.FlowControl; fc != nil {
		// As upstream's filter: after impersonation, before authorization.
		a := info.attributes(user)
		fc.ResponseHeaders(&a, rec.Header())
	}
	if err := s.authorize(r.Context(), info, user); err != nil {
		s.writeError(rec, r, err)
		return
	}
	if s.serveAggregated(rec, r) {
		aggregated = true
		return
	}
	if !info.IsResource {
		if !s.serveNonResource(rec, r) {
			s.writeError(rec, r, notFoundPath())
		}
		return
	}
	s.serveResource(rec, r, info)
}

type loopbackKey struct{}

// authenticate returns the user of a request: the loopback user for
// in-process calls, else what the Authenticator says. No credentials is an error.
func (s *Server) authenticate(r *http.Request) (*auth.User, error) {
	if u, ok := r.Context().Value(loopbackKey{}).(*auth.User); ok && u != nil {
		return u, nil
	}
	u, ok, err := s.cfg.Authenticator.AuthenticateRequest(r)
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	if !ok || u == nil {
		return nil, errors.New("authenticate: no credentials")
	}
	return u, nil
}

// authorize asks the Authorizer and turns a denial into kube's 403 message.
func (s *Server) authorize(ctx context.Context, info *requestInfo, u *auth.User) error {
	allowed, reason, err := s.cfg.Authorizer.Authorize(ctx, info.attributes(u))
	if allowed {
		return nil
	}
	if err != nil {
		s.log.Warn("authorizer failed", zap.String("user", u.Name), zap.Error(err))
		return apierrors.NewInternalError(fmt.Errorf("authorization failed: %w", err))
	}
	return forbidden(info, u, reason)
}

// forbidden builds upstream's message, e.g. `pods "x" is forbidden: User "u"
// cannot get resource "pods" in API group "" in the namespace "ns"`.
func forbidden(info *requestInfo, u *auth.User, reason string) error {
	var msg string
	if !info.IsResource {
		msg = fmt.Sprintf("User %q cannot %s path %q", u.Name, info.Verb, info.Path)
	} else {
		res := info.Resource
		if info.Subresource != "" {
			res += "/" + info.Subresource
		}
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q", u.Name, info.Verb, res, info.APIGroup)
		if info.Namespace != "" {
			msg += fmt.Sprintf(" in the namespace %q", info.Namespace)
		} else {
			msg += " at the cluster scope"
		}
	}
	if reason != "" {
		msg += ": " + reason
	}
	if !info.IsResource {
		return &apierrors.StatusError{ErrStatus: forbiddenStatus("forbidden: " + msg)}
	}
	gr := schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
	return apierrors.NewForbidden(gr, info.Name, errors.New(msg))
}

// statusRecorder remembers the response code for the request log and passes
// Flush through for watches.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
