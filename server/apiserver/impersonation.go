package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orch/orch/server/auth"
)

// The impersonation headers (`kubectl --as`, `--as-group`, `--as-uid`).
const (
	impersonateUser        = "Impersonate-User"
	impersonateGroup       = "Impersonate-Group"
	impersonateUID         = "Impersonate-Uid"
	impersonateExtraPrefix = "Impersonate-Extra-"
	serviceAccountPrefix   = "system:serviceaccount:"
)

// impersonate returns the user a request acts as: u itself without
// impersonation headers, else the requested identity once u may
// `impersonate` each part of it (upstream's impersonation filter). The
// headers are removed from r.
func (s *Server) impersonate(r *http.Request, u *auth.User) (*auth.User, error) {
	want, checks, err := requestedIdentity(r.Header)
	if err != nil || want == nil {
		return u, err
	}
	for _, c := range checks {
		c.User = u
		allowed, reason, err := s.cfg.Authorizer.Authorize(r.Context(), c)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("impersonation: %w", err))
		}
		if !allowed {
			return nil, forbidden(infoOf(c), u, reason)
		}
	}
	for h := range r.Header {
		if strings.HasPrefix(h, "Impersonate-") {
			r.Header.Del(h)
		}
	}
	return want, nil
}

// requestedIdentity parses the headers into the user to act as and the
// `impersonate` checks it needs; nil without impersonation headers.
func requestedIdentity(h http.Header) (*auth.User, []auth.Attributes, error) {
	name := h.Get(impersonateUser)
	groups := h.Values(impersonateGroup)
	uid := h.Get(impersonateUID)
	extra := map[string][]string{}
	for k, vs := range h {
		if strings.HasPrefix(k, impersonateExtraPrefix) {
			key, err := url.PathUnescape(strings.ToLower(strings.TrimPrefix(k, impersonateExtraPrefix)))
			if err != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid impersonation extra header %q: %v", k, err))
			}
			extra[key] = append(extra[key], vs...)
		}
	}
	if name == "" {
		if len(groups) > 0 || uid != "" || len(extra) > 0 {
			return nil, nil, apierrors.NewBadRequest(errors.New("requested impersonation of groups, uid or extra without impersonating a user").Error())
		}
		return nil, nil, nil
	}
	want := &auth.User{Name: name, UID: uid, Groups: append([]string(nil), groups...)}
	checks := []auth.Attributes{userCheck(name)}
	for _, g := range groups {
		checks = append(checks, auth.Attributes{Verb: "impersonate", Resource: "groups", Name: g, IsResource: true})
	}
	if uid != "" {
		checks = append(checks, auth.Attributes{Verb: "impersonate", APIGroup: "authentication.k8s.io", Resource: "uids", Name: uid, IsResource: true})
	}
	for k, vs := range extra {
		for _, v := range vs {
			checks = append(checks, auth.Attributes{Verb: "impersonate", APIGroup: "authentication.k8s.io",
				Resource: "userextras", Subresource: k, Name: v, IsResource: true})
		}
	}
	if len(extra) > 0 {
		want.Extra = extra
	}
	addImpersonatedGroups(want, len(groups) == 0)
	return want, checks, nil
}

// userCheck is the check for the user name: a ServiceAccount is
// impersonated through the serviceaccounts resource of its namespace.
func userCheck(name string) auth.Attributes {
	if rest, ok := strings.CutPrefix(name, serviceAccountPrefix); ok {
		if ns, sa, ok := strings.Cut(rest, ":"); ok {
			return auth.Attributes{Verb: "impersonate", Resource: "serviceaccounts", Namespace: ns, Name: sa, IsResource: true}
		}
	}
	return auth.Attributes{Verb: "impersonate", Resource: "users", Name: name, IsResource: true}
}

// addImpersonatedGroups gives a ServiceAccount its groups when none were
// asked for, and every impersonated user system:authenticated.
func addImpersonatedGroups(u *auth.User, noGroups bool) {
	if rest, ok := strings.CutPrefix(u.Name, serviceAccountPrefix); ok && noGroups {
		if ns, _, ok := strings.Cut(rest, ":"); ok {
			u.Groups = append(u.Groups, "system:serviceaccounts", "system:serviceaccounts:"+ns)
		}
	}
	if u.Name != "system:anonymous" && !slices.Contains(u.Groups, auth.GroupAuthenticated) {
		u.Groups = append(u.Groups, auth.GroupAuthenticated)
	}
}

// infoOf renders a check as a requestInfo for the 403 message.
func infoOf(a auth.Attributes) *requestInfo {
	return &requestInfo{IsResource: true, Verb: a.Verb, APIGroup: a.APIGroup, Namespace: a.Namespace,
		Resource: a.Resource, Subresource: a.Subresource, Name: a.Name}
}
