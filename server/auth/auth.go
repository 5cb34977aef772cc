package auth

import (
	"context"
	"net/http"
)

// User is an authenticated identity: from a client certificate (CN = name,
// O = groups) or a bearer token.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra is additional information the authenticator provides
	// (e.g. the pod a ServiceAccount token is bound to).
	Extra map[string][]string
}

// Attributes describe one API request for authorization, like
// kube-apiserver's authorizer.Attributes.
type Attributes struct {
	User        *User
	Verb        string // get, list, watch, create, update, patch, delete, deletecollection; or lower-case HTTP method for non-resource
	Namespace   string
	APIGroup    string
	Resource    string
	Subresource string
	Name        string
	Path        string // for non-resource requests (e.g. /healthz, /version)
	IsResource  bool
	// FieldSelector is a list's or watch's fieldSelector parameter, as
	// sent (upstream's authorization sees the parsed requirements).
	FieldSelector string
}

// Authenticator tells who sent a request. ok=false with a nil error means no
// credentials were presented (the API server answers 401: no anonymous access).
type Authenticator interface {
	AuthenticateRequest(r *http.Request) (user *User, ok bool, err error)
}

// Authorizer decides whether a user may do what Attributes describe.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (allowed bool, reason string, err error)
}

type userKey struct{}

// WithUser returns a context carrying the authenticated user.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the authenticated user of a request context.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok
}
