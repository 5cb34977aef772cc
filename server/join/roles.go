package join

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/internal/bootstraptoken"
	"github.com/orch/orch/internal/pki"
)

// role is what a presented token allows.
type role int

const (
	// roleAgent may join agents (node-certificate) only.
	roleAgent role = iota + 1
	// roleServer may also fetch the cluster's shared secrets
	// (server-bootstrap): only the server token has it.
	roleServer
)

// SecretGetter reads the Secrets of kube-system: the bootstrap tokens of
// `orch token create`. client-go's SecretInterface satisfies it.
type SecretGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
}

// errTokenLookup means a bootstrap token could not be looked up (the
// datastore is unavailable): not the client's fault.
var errTokenLookup = errors.New("looking up the bootstrap token")

// errServerOnly refuses an agent-only token at ServerBootstrapPath.
var errServerOnly = errors.New("this token may only join agents: a server joins with the server token " +
	"(<data-dir>/server/token of a server), not an agent token (--agent-token) or a bootstrap token (orch token create)")

// tokenRole compares the bearer secret with the server token, the agent
// token and the bootstrap tokens, in that order. Its errors never contain
// the presented secret.
func (h *Handler) tokenRole(ctx context.Context, given string) (role, error) {
	if pki.SecretsEqual(given, h.secret) {
		return roleServer, nil
	}
	if h.agentSecret != "" && pki.SecretsEqual(given, h.agentSecret) {
		return roleAgent, nil
	}
	if tok, err := bootstraptoken.Parse(given); err == nil && h.tokens != nil {
		return roleAgent, h.checkBootstrapToken(ctx, tok)
	}
	return 0, errors.New("the join token secret is wrong: use the token in <data-dir>/server/token of a server of this cluster, " +
		"its agent token or one made by `orch token create`")
}

// checkBootstrapToken looks the token's Secret up and checks it.
func (h *Handler) checkBootstrapToken(ctx context.Context, tok bootstraptoken.Token) error {
	s, err := h.tokens.Get(ctx, tok.SecretName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("bootstrap token %s does not exist (deleted, or expired and cleaned up): create one with `orch token create`", tok.ID)
	}
	if err != nil {
		return fmt.Errorf("%w %s: %w", errTokenLookup, tok.ID, err)
	}
	return bootstraptoken.Check(s, tok, h.now())
}

// bearer extracts the bearer secret (a full K10 token is accepted too; its
// hash was checked by the client).
func bearer(r *http.Request) (string, error) {
	authz := r.Header.Get("Authorization")
	scheme, given, ok := strings.Cut(authz, " ")
	if authz == "" || !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", errors.New("join requests need an \"Authorization: Bearer <join token secret>\" header")
	}
	given = strings.TrimSpace(given)
	if _, s, err := pki.ParseToken(given); err == nil {
		given = s
	}
	return given, nil
}

func (h *Handler) now() time.Time {
	if h.clock != nil {
		return h.clock()
	}
	return time.Now()
}
