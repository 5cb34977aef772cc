package satoken

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/server/auth"
)

// Objects reads the objects a token names; (nil, nil) means not found.
type Objects interface {
	ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// ErrInvalid is wrapped by every rejection of a token of ours.
var ErrInvalid = errors.New("invalid service account token")

// Authenticator authenticates bearer ServiceAccount tokens.
type Authenticator struct {
	pub       *ecdsa.PublicKey
	issuer    string
	audiences []string
	objects   Objects
	now       func() time.Time
}

var _ auth.Authenticator = (*Authenticator)(nil)

// NewAuthenticator verifies tokens of issuer signed by pub's key, for one of
// audiences, against objects.
func NewAuthenticator(pub *ecdsa.PublicKey, issuer string, audiences []string, objects Objects) *Authenticator {
	return &Authenticator{pub: pub, issuer: issuer, audiences: audiences, objects: objects, now: time.Now}
}

// AuthenticateRequest implements auth.Authenticator.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*auth.User, bool, error) {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return nil, false, nil
	}
	return a.AuthenticateToken(r.Context(), strings.TrimSpace(tok), nil)
}

// AuthenticateToken checks tok. audiences overrides the API audiences (TokenReview's spec.audiences).
func (a *Authenticator) AuthenticateToken(ctx context.Context, tok string, audiences []string) (*auth.User, bool, error) {
	if !looksLikeJWT(tok) {
		return nil, false, nil
	}
	switch peekIssuer(tok) {
	case a.issuer:
	case LegacyIssuer:
		return a.authenticateLegacy(ctx, tok)
	default:
		return nil, false, nil // someone else's token
	}
	var c Claims
	if err := parse(tok, a.pub, &c); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(audiences) == 0 {
		audiences = a.audiences
	}
	if err := a.checkClaims(&c, audiences); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	u, err := a.checkObjects(ctx, &c)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return u, true, nil
}

func (a *Authenticator) checkClaims(c *Claims, audiences []string) error {
	now := a.now().Unix()
	switch {
	case c.K8s == nil || c.K8s.Namespace == "" || c.K8s.ServiceAccount.Name == "":
		return errors.New("token names no service account")
	case c.Subject != UserName(c.K8s.Namespace, c.K8s.ServiceAccount.Name):
		return errors.New("subject does not match the service account")
	case c.Expiry <= now:
		return errors.New("token has expired")
	case c.NotBefore > now+60:
		return errors.New("token is not valid yet")
	case !audienceMatches(c.Audience, audiences):
		return errors.New("token audiences are not accepted")
	}
	return nil
}

// checkObjects is upstream's validation of bound tokens: the objects named
// must exist with the uids the token carries.
func (a *Authenticator) checkObjects(ctx context.Context, c *Claims) (*auth.User, error) {
	ns, sa := c.K8s.Namespace, c.K8s.ServiceAccount
	acct, err := a.objects.ServiceAccount(ctx, ns, sa.Name)
	if err != nil {
		return nil, fmt.Errorf("looking up service account %s/%s: %w", ns, sa.Name, err)
	}
	if acct == nil || (sa.UID != "" && string(acct.UID) != sa.UID) {
		return nil, fmt.Errorf("service account %s/%s has been deleted", ns, sa.Name)
	}
	if acct.DeletionTimestamp != nil {
		return nil, fmt.Errorf("service account %s/%s is being deleted", ns, sa.Name)
	}
	if err := a.checkBound(ctx, ns, c.K8s); err != nil {
		return nil, err
	}
	u := &auth.User{Name: c.Subject, UID: string(acct.UID), Groups: Groups(ns)}
	u.Extra = extraFor(c)
	return u, nil
}

func (a *Authenticator) checkBound(ctx context.Context, ns string, p *Private) error {
	if p.Pod != nil {
		pod, err := a.objects.Pod(ctx, ns, p.Pod.Name)
		if err != nil {
			return fmt.Errorf("looking up pod %s/%s: %w", ns, p.Pod.Name, err)
		}
		if pod == nil || string(pod.UID) != p.Pod.UID {
			return fmt.Errorf("pod %s/%s has been deleted", ns, p.Pod.Name)
		}
		if pod.DeletionTimestamp != nil && !pod.DeletionTimestamp.After(a.now()) {
			return fmt.Errorf("pod %s/%s is being deleted", ns, p.Pod.Name)
		}
	}
	if p.Secret != nil {
		s, err := a.objects.Secret(ctx, ns, p.Secret.Name)
		if err != nil {
			return fmt.Errorf("looking up secret %s/%s: %w", ns, p.Secret.Name, err)
		}
		if s == nil || string(s.UID) != p.Secret.UID || s.DeletionTimestamp != nil {
			return fmt.Errorf("secret %s/%s has been deleted", ns, p.Secret.Name)
		}
	}
	return nil
}

// extraFor is the user's extra info upstream adds for bound tokens.
func extraFor(c *Claims) map[string][]string {
	extra := map[string][]string{}
	if c.ID != "" {
		extra["authentication.kubernetes.io/credential-id"] = []string{"JTI=" + c.ID}
	}
	if p := c.K8s.Pod; p != nil {
		extra["authentication.kubernetes.io/pod-name"] = []string{p.Name}
		extra["authentication.kubernetes.io/pod-uid"] = []string{p.UID}
	}
	if n := c.K8s.Node; n != nil && n.Name != "" {
		extra["authentication.kubernetes.io/node-name"] = []string{n.Name}
		if n.UID != "" { // a node that did not exist when the token was issued
			extra["authentication.kubernetes.io/node-uid"] = []string{n.UID}
		}
	}
	if len(extra) == 0 {
		return nil
	}
	return extra
}
