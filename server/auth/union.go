package auth

import (
	"errors"
	"net/http"
)

type union []Authenticator

var _ Authenticator = union(nil)

// Union tries authenticators in order; the first that authenticates the
// request wins. When none does, the errors of those that rejected a
// presented credential are returned joined (the request gets 401); with no
// errors either, the request carried no credentials (ok=false, nil).
func Union(auths ...Authenticator) Authenticator { return union(auths) }

func (u union) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	var errs []error
	for _, a := range u {
		user, ok, err := a.AuthenticateRequest(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return user, true, nil
		}
	}
	return nil, false, errors.Join(errs...)
}
