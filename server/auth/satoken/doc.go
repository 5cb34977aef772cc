// Package satoken issues and verifies ServiceAccount tokens: JWTs signed
// with ES256 by the key made on first start beside the cluster CA
// (internal/pki LoadOrCreateServiceAccountKey), in the claim layout of
// kube-apiserver's bound tokens (iss, sub, aud, exp, iat, nbf, jti and the
// private "kubernetes.io" claim naming the namespace, the ServiceAccount and
// the Pod or Secret the token is bound to).
//
// Issuer signs (the serviceaccounts/token subresource, TokenRequest).
// Authenticator is an auth.Authenticator for "Authorization: Bearer" JWTs:
// signature, issuer, audience, expiry, then the datastore check upstream
// does for bound tokens — the ServiceAccount still exists with the same
// uid, and so does the bound Pod (not being deleted) or Secret — so a
// token dies with the objects it names. Tokens of other issuers are left to
// the next authenticator; invalid tokens of ours are errors (401).
//
// The JWS is built with the Go standard library only (ES256 is
// ECDSA P-256 with SHA-256 and the raw r||s signature of RFC 7518).
package satoken
