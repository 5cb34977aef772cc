package pki

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/orch/orch/internal/bootstraptoken"
)

// Join tokens look like k3s's: K10<sha256 hex of the CA PEM>::server:<secret>
// (the server token), K10<hash>::node:<secret> (the agent token of
// --agent-token) or K10<hash>::<id>.<secret> (a bootstrap token of
// `orch token create`). The hash lets a joining host pin the CA before it
// trusts the server.
const (
	TokenPrefix   = "K10"
	tokenUser     = "server"
	agentUser     = "node"
	tokenFileMode = 0o600
	caHashLen     = 64
)

var (
	// ErrInvalidToken means a token is malformed.
	ErrInvalidToken = errors.New("invalid join token")
	// ErrTokenCAMismatch means a full token pins a different cluster CA.
	ErrTokenCAMismatch = errors.New("join token does not match the cluster CA")
)

// CAHash returns the hex SHA-256 of the CA certificate PEM, as pinned in
// join tokens.
func CAHash(caPEM []byte) string {
	sum := sha256.Sum256(caPEM)
	return hex.EncodeToString(sum[:])
}

// FormatToken builds a full token from a CA hash and a secret.
func FormatToken(caHash, secret string) string {
	return TokenPrefix + caHash + "::" + tokenUser + ":" + secret
}

// FormatAgentToken builds a full agent-only token (k3s's agent token form).
func FormatAgentToken(caHash, secret string) string {
	return TokenPrefix + caHash + "::" + agentUser + ":" + secret
}

// FormatBootstrapToken builds the full join form of a bootstrap token
// "<id>.<secret>", as `k3s token create` prints it.
func FormatBootstrapToken(caHash, idAndSecret string) string {
	return TokenPrefix + caHash + "::" + idAndSecret
}

// ParseToken splits a join token. For the three full forms the secret is
// what follows "server:" or "node:", or the whole "<id>.<secret>" of a
// bootstrap token: the server tells them apart by value. A full token gives its CA hash and
// secret; a bare secret (no K10 prefix) gives an empty caHash, meaning the
// CA is not pinned. Surrounding whitespace is ignored.
func ParseToken(s string) (caHash, secret string, err error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, TokenPrefix) {
		if err := checkSecret(s); err != nil {
			return "", "", err
		}
		return "", s, nil
	}
	hash, creds, ok := strings.Cut(strings.TrimPrefix(s, TokenPrefix), "::")
	if !ok {
		return "", "", fmt.Errorf("%w: full token lacks the \"::\" after the CA hash", ErrInvalidToken)
	}
	if len(hash) != caHashLen || !isLowerHex(hash) {
		return "", "", fmt.Errorf("%w: CA hash must be %d lower-case hex digits", ErrInvalidToken, caHashLen)
	}
	if bootstraptoken.IsToken(creds) {
		return hash, creds, nil
	}
	user, secret, ok := strings.Cut(creds, ":")
	if !ok || (user != tokenUser && user != agentUser) {
		return "", "", fmt.Errorf("%w: credentials after the CA hash must be %q, %q or a bootstrap token <id>.<secret>",
			ErrInvalidToken, tokenUser+":<secret>", agentUser+":<secret>")
	}
	if err := checkSecret(secret); err != nil {
		return "", "", err
	}
	return hash, secret, nil
}

func checkSecret(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty secret", ErrInvalidToken)
	}
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return fmt.Errorf("%w: secret must be printable ASCII without spaces", ErrInvalidToken)
		}
	}
	return nil
}

func isLowerHex(s string) bool {
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// SecretsEqual compares two token secrets in constant time.
func SecretsEqual(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// LoadOrCreateToken returns the full join token kept in path
// (<data-dir>/server/token). With given == "" the stored token is reused or,
// on first start, a random one is created. Otherwise given (a bare secret or
// a full token, whose CA hash must match caPEM) becomes the token. The file
// is written with mode 0600 when its content changes. log may be nil.
func LoadOrCreateToken(path string, caPEM []byte, given string, log *zap.Logger) (string, error) {
	if log == nil {
		log = zap.NewNop()
	}
	hash := CAHash(caPEM)
	secret, source, err := tokenSecret(path, hash, given)
	if err != nil {
		return "", err
	}
	token := FormatToken(hash, secret)
	wrote, err := writeTokenFile(path, token, "join token")
	if err != nil {
		return "", err
	}
	if wrote {
		log.Info("wrote join token", zap.String("path", path), zap.String("source", source))
	}
	return token, nil
}

// writeTokenFile stores token in path (mode 0600) unless the file already
// holds it, and reports whether it wrote; what names the token in errors.
func writeTokenFile(path, token, what string) (bool, error) {
	old, err := readOptional(path)
	if err != nil {
		return false, err
	}
	if bytes.Equal(bytes.TrimSpace(old), []byte(token)) {
		return false, nil
	}
	if err := ensureParentDir(path); err != nil {
		return false, err
	}
	if err := writeFileAtomic(path, []byte(token+"\n"), tokenFileMode); err != nil {
		return false, fmt.Errorf("write %s: %w", what, err)
	}
	return true, nil
}

// tokenSecret picks the secret: the given one, the stored one or a new one.
func tokenSecret(path, hash, given string) (secret, source string, err error) {
	if given != "" {
		h, s, err := ParseToken(given)
		if err != nil {
			return "", "", fmt.Errorf("--token: %w", err)
		}
		if h != "" && h != hash {
			return "", "", fmt.Errorf("--token: %w", ErrTokenCAMismatch)
		}
		return s, "flag", nil
	}
	old, err := readOptional(path)
	if err != nil {
		return "", "", err
	}
	if old != nil {
		_, s, err := ParseToken(string(old))
		if err != nil {
			return "", "", fmt.Errorf("token file %s: %w", path, err)
		}
		return s, "file", nil
	}
	buf := make([]byte, 16)
	if _, err := rand.Read(buf); err != nil {
		return "", "", fmt.Errorf("generate token secret: %w", err)
	}
	return hex.EncodeToString(buf), "generated", nil
}

func ensureParentDir(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	return ensurePrivateDir(dir)
}
