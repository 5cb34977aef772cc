package satoken

import (
	"context"
	"errors"
	"fmt"

	"github.com/orch/orch/server/auth"
)

// LegacyIssuer is the "iss" of tokens kept in kubernetes.io/service-account-token Secrets.
const LegacyIssuer = "kubernetes/serviceaccount"

// legacyClaims are upstream's claims of Secret-based tokens (no expiry).
type legacyClaims struct {
	Issuer     string `json:"iss"`
	Subject    string `json:"sub"`
	Namespace  string `json:"kubernetes.io/serviceaccount/namespace"`
	SecretName string `json:"kubernetes.io/serviceaccount/secret.name"`
	SAName     string `json:"kubernetes.io/serviceaccount/service-account.name"`
	SAUID      string `json:"kubernetes.io/serviceaccount/service-account.uid"`
}

// IssueLegacy signs the token of a kubernetes.io/service-account-token
// Secret: it does not expire and is valid while the Secret holds it and the
// ServiceAccount exists.
func (i *Issuer) IssueLegacy(namespace string, sa Ref, secretName string) (string, error) {
	if namespace == "" || sa.Name == "" || sa.UID == "" || secretName == "" {
		return "", errors.New("satoken: legacy tokens need a namespace, a service account with uid and a secret")
	}
	return sign(i.key, i.kid, legacyClaims{Issuer: LegacyIssuer, Subject: UserName(namespace, sa.Name),
		Namespace: namespace, SecretName: secretName, SAName: sa.Name, SAUID: sa.UID})
}

// authenticateLegacy checks a Secret-based token: signature, then that the
// ServiceAccount exists with its uid and the Secret still holds this token.
func (a *Authenticator) authenticateLegacy(ctx context.Context, tok string) (*auth.User, bool, error) {
	var c legacyClaims
	if err := parse(tok, a.pub, &c); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if c.Namespace == "" || c.SAName == "" || c.SecretName == "" || c.Subject != UserName(c.Namespace, c.SAName) {
		return nil, false, fmt.Errorf("%w: incomplete legacy claims", ErrInvalid)
	}
	acct, err := a.objects.ServiceAccount(ctx, c.Namespace, c.SAName)
	if err != nil {
		return nil, false, fmt.Errorf("looking up service account %s/%s: %w", c.Namespace, c.SAName, err)
	}
	if acct == nil || string(acct.UID) != c.SAUID || acct.DeletionTimestamp != nil {
		return nil, false, fmt.Errorf("%w: service account %s/%s has been deleted", ErrInvalid, c.Namespace, c.SAName)
	}
	s, err := a.objects.Secret(ctx, c.Namespace, c.SecretName)
	if err != nil {
		return nil, false, fmt.Errorf("looking up secret %s/%s: %w", c.Namespace, c.SecretName, err)
	}
	if s == nil || s.DeletionTimestamp != nil || string(s.Data["token"]) != tok {
		return nil, false, fmt.Errorf("%w: token does not match secret %s/%s", ErrInvalid, c.Namespace, c.SecretName)
	}
	return &auth.User{Name: c.Subject, UID: c.SAUID, Groups: Groups(c.Namespace)}, true, nil
}
