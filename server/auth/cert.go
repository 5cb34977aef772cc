package auth

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
)

// ErrInvalidCredentials is wrapped by every error about a presented but
// unacceptable credential; the API server answers 401.
var ErrInvalidCredentials = errors.New("invalid credentials")

// CertAuthenticator authenticates requests by their TLS client certificate.
type CertAuthenticator struct {
	roots *x509.CertPool
}

var _ Authenticator = (*CertAuthenticator)(nil)

// NewCertAuthenticator authenticates client certificates issued by the CAs
// in pool: User{Name: CN, Groups: O + system:authenticated}.
func NewCertAuthenticator(pool *x509.CertPool) *CertAuthenticator {
	return &CertAuthenticator{roots: pool}
}

// AuthenticateRequest implements Authenticator. The chain is verified again
// against the authenticator's own pool (as kube-apiserver does), so it does
// not depend on how the TLS listener was configured.
func (a *CertAuthenticator) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	opts := x509.VerifyOptions{
		Roots:         a.roots,
		Intermediates: x509.NewCertPool(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, c := range r.TLS.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := leaf.Verify(opts); err != nil {
		return nil, false, fmt.Errorf("%w: client certificate %q: %w", ErrInvalidCredentials, leaf.Subject.CommonName, err)
	}
	if leaf.Subject.CommonName == "" {
		return nil, false, fmt.Errorf("%w: client certificate has an empty common name", ErrInvalidCredentials)
	}
	return &User{Name: leaf.Subject.CommonName, Groups: withAuthenticated(leaf.Subject.Organization)}, true, nil
}
