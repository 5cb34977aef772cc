package kubeletapi

import (
	"context"
	"crypto/x509"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Caller is who sent a request: the client certificate's CN and O, or the
// user a bearer token belongs to.
type Caller struct {
	Name   string
	Groups []string
}

// TokenReviewer authenticates bearer tokens (TokenReview to the API server).
type TokenReviewer interface {
	ReviewToken(ctx context.Context, token string) (Caller, bool, error)
}

// AccessReviewer decides whether a caller may verb nodes/<subresource> of
// this node (SubjectAccessReview to the API server).
type AccessReviewer interface {
	Allowed(ctx context.Context, c Caller, verb, subresource string) (bool, error)
}

// authenticate returns the caller of r: a client certificate of the cluster
// CA (verified by TLS), else a bearer token the reviewer accepts.
func (s *Server) authenticate(r *http.Request) (Caller, bool) {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		leaf := r.TLS.VerifiedChains[0][0]
		return callerOf(leaf), true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || s.cfg.Tokens == nil {
		return Caller{}, false
	}
	c, ok, err := s.tokens.review(r.Context(), s.cfg.Tokens, strings.TrimSpace(tok))
	if err != nil {
		return Caller{}, false
	}
	return c, ok
}

func callerOf(cert *x509.Certificate) Caller {
	return Caller{Name: cert.Subject.CommonName, Groups: append([]string(nil), cert.Subject.Organization...)}
}

// attributes maps a request to kubelet's authorization attributes: the
// verb from the method and the nodes subresource from the path.
func attributes(r *http.Request) (verb, subresource string) {
	verb = map[string]string{http.MethodPost: "create", http.MethodPut: "update", http.MethodPatch: "patch",
		http.MethodDelete: "delete"}[r.Method]
	if verb == "" {
		verb = "get"
	}
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/stats"):
		return verb, "stats"
	case strings.HasPrefix(p, "/metrics"):
		return verb, "metrics"
	case strings.HasPrefix(p, "/logs"):
		return verb, "log"
	case strings.HasPrefix(p, "/spec"):
		return verb, "spec"
	}
	return verb, "proxy"
}

// authorize: the API server's own client and system:masters pass; everyone
// else is asked about through the AccessReviewer.
func (s *Server) authorize(r *http.Request, c Caller) bool {
	if slices.Contains(c.Groups, "system:masters") {
		return true
	}
	if s.cfg.Access == nil {
		return false
	}
	verb, sub := attributes(r)
	ok, err := s.access.allowed(r.Context(), s.cfg.Access, c, verb, sub)
	return err == nil && ok
}

// reviewCache remembers review answers for a while, as kubelet's webhook
// authenticator and authorizer do (allowed 5 min, denied 30 s).
type reviewCache struct {
	mu sync.Mutex
	m  map[string]cached
}

type cached struct {
	caller  Caller
	ok      bool
	expires time.Time
}

func (c *reviewCache) get(key string) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	if !ok || time.Now().After(v.expires) {
		return cached{}, false
	}
	return v, true
}

func (c *reviewCache) put(key string, v cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 1000 {
		c.m = map[string]cached{}
	}
	ttl := 30 * time.Second
	if v.ok {
		ttl = 5 * time.Minute
	}
	v.expires = time.Now().Add(ttl)
	c.m[key] = v
}

func (c *reviewCache) review(ctx context.Context, tr TokenReviewer, token string) (Caller, bool, error) {
	if v, ok := c.get(token); ok {
		return v.caller, v.ok, nil
	}
	caller, ok, err := tr.ReviewToken(ctx, token)
	if err != nil {
		return Caller{}, false, err
	}
	c.put(token, cached{caller: caller, ok: ok})
	return caller, ok, nil
}

func (c *reviewCache) allowed(ctx context.Context, ar AccessReviewer, who Caller, verb, sub string) (bool, error) {
	key := who.Name + "\x00" + strings.Join(who.Groups, ",") + "\x00" + verb + "\x00" + sub
	if v, ok := c.get(key); ok {
		return v.ok, nil
	}
	ok, err := ar.Allowed(ctx, who, verb, sub)
	if err != nil {
		return false, err
	}
	c.put(key, cached{ok: ok})
	return ok, nil
}
