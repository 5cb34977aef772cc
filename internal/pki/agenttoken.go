package pki

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"go.uber.org/zap"
)

// WriteAgentToken keeps the agent-only join token of --agent-token in path
// (<data-dir>/server/agent-token, as k3s does) and returns it in its full
// form K10<hash>::node:<secret>. given is a bare secret or a full token
// whose CA hash must match caPEM. With given == "" there is no agent token:
// a file left by an earlier start is removed and "" is returned. The secret
// must differ from serverSecret, or the agent token would open
// /v1-orch/server-bootstrap too.
func WriteAgentToken(path string, caPEM []byte, given, serverSecret string, log *zap.Logger) (string, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if given == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("removing the old agent token: %w", err)
		}
		return "", nil
	}
	hash := CAHash(caPEM)
	h, secret, err := ParseToken(given)
	if err != nil {
		return "", fmt.Errorf("--agent-token: %w", err)
	}
	if h != "" && h != hash {
		return "", fmt.Errorf("--agent-token: %w", ErrTokenCAMismatch)
	}
	if SecretsEqual(secret, serverSecret) {
		return "", fmt.Errorf("--agent-token: %w: it must differ from the server token", ErrInvalidToken)
	}
	token := FormatAgentToken(hash, secret)
	wrote, err := writeTokenFile(path, token, "agent token")
	if err != nil {
		return "", err
	}
	if wrote {
		log.Info("wrote agent token", zap.String("path", path))
	}
	return token, nil
}
