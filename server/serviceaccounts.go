package server

import (
	"crypto/x509"
	"fmt"
	"time"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/auth/satoken"
	"github.com/orch/orch/server/reviews"
)

// saTokens is the ServiceAccount token machinery of one server: the
// signing key beside the CA, the issuer and the authenticator.
type saTokens struct {
	issuer        *satoken.Issuer
	authenticator *satoken.Authenticator
	oidc          *apiserver.OIDCDocuments
}

func newServiceAccountTokens(bundle *pki.Bundle, store datastore.Store, clusterDomain string) (*saTokens, error) {
	key, err := pki.LoadOrCreateServiceAccountKey(bundle.Dir())
	if err != nil {
		return nil, fmt.Errorf("service account signing key: %w", err)
	}
	iss, err := satoken.NewIssuer(key, satoken.DefaultIssuer(clusterDomain), nil)
	if err != nil {
		return nil, err
	}
	authn := satoken.NewAuthenticator(&key.PublicKey, iss.IssuerURL(), iss.APIAudiences(), satoken.StoreObjects{Store: store})
	config, jwks, err := iss.OIDCDocuments()
	if err != nil {
		return nil, fmt.Errorf("service account issuer discovery: %w", err)
	}
	return &saTokens{issuer: iss, authenticator: authn, oidc: &apiserver.OIDCDocuments{Config: config, JWKS: jwks}}, nil
}

// reviews are TokenReview (answered by the whole authenticator chain) and
// SelfSubjectReview.
func (t *saTokens) reviews(chain auth.Authenticator) []apiserver.Virtual {
	return reviews.Authentication(reviews.ChainTokens{Chain: chain, ServiceAccount: t.authenticator,
		APIAudiences: t.issuer.APIAudiences()})
}

// issueLegacy signs the token of a kubernetes.io/service-account-token Secret.
func (t *saTokens) issueLegacy(namespace, saName, saUID, secretName string) (string, error) {
	return t.issuer.IssueLegacy(namespace, satoken.Ref{Name: saName, UID: saUID}, secretName)
}

// controllerTLS is the key material the leader's controllers need.
type controllerTLS struct {
	caPEM []byte
	sa    *saTokens
	// signCSR signs CertificateSigningRequests with the cluster CA.
	signCSR func(req *x509.CertificateRequest, ttl time.Duration, keyUsage x509.KeyUsage, extUsage []x509.ExtKeyUsage) ([]byte, error)
}
