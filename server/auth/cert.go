package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// ErrInvalidCredentials is wrapped by every error about a presented but
// unacceptable credential; the API server answers 401.
var ErrInvalidCredentials = errors.New("invalid credentials")

// CertAuthenticator authenticates requests by their TLS client certificate.
// Verified certificates are remembered (by the SHA-256 of their DER bytes,
// until they expire) so the chain is checked once per certificate, not on
// every request: the listener only requests certificates, so each request
// would otherwise pay for an ECDSA verification.
type CertAuthenticator struct {
	roots *x509.CertPool
	now   func() time.Time

	mu       sync.Mutex
	verified map[[sha256.Size]byte]verifiedCert
}

// verifiedCert is a cache entry: who the certificate names and until when.
type verifiedCert struct {
	user     *User
	notAfter time.Time
}

// maxVerifiedCerts bounds the cache; when full it is emptied (certificates
// are few: the admin, one per node, a handful of others).
const maxVerifiedCerts = 4096

var _ Authenticator = (*CertAuthenticator)(nil)

// NewCertAuthenticator authenticates client certificates issued by the CAs
// in pool: User{Name: CN, Groups: O + system:authenticated}.
func NewCertAuthenticator(pool *x509.CertPool) *CertAuthenticator {
	return &CertAuthenticator{roots: pool, now: time.Now, verified: map[[sha256.Size]byte]verifiedCert{}}
}

// AuthenticateRequest implements Authenticator. The chain is verified again
// against the authenticator's own pool (as kube-apiserver does), so it does
// not depend on how the TLS listener was configured.
func (a *CertAuthenticator) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	key := sha256.Sum256(leaf.Raw)
	if u, ok := a.cached(key); ok {
		return u, true, nil
	}
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
	u := &User{Name: leaf.Subject.CommonName, Groups: withAuthenticated(leaf.Subject.Organization)}
	a.remember(key, u, leaf.NotAfter)
	return u, true, nil
}

// cached returns the user of a verified, unexpired certificate.
func (a *CertAuthenticator) cached(key [sha256.Size]byte) (*User, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.verified[key]
	if !ok {
		return nil, false
	}
	if a.now().After(e.notAfter) {
		delete(a.verified, key)
		return nil, false
	}
	return e.user, true
}

func (a *CertAuthenticator) remember(key [sha256.Size]byte, u *User, notAfter time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.verified) >= maxVerifiedCerts {
		clear(a.verified)
	}
	a.verified[key] = verifiedCert{user: u, notAfter: notAfter}
}
