package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/join"
)

// readAgentToken reads --agent-token-file into AgentToken.
func (c *Config) readAgentToken() error {
	if c.AgentTokenFile == "" {
		return nil
	}
	if c.AgentToken != "" {
		return fmt.Errorf("--agent-token and --agent-token-file are mutually exclusive")
	}
	b, err := os.ReadFile(c.AgentTokenFile)
	if err != nil {
		return fmt.Errorf("--agent-token-file: %w", err)
	}
	if c.AgentToken = strings.TrimSpace(string(b)); c.AgentToken == "" {
		return fmt.Errorf("--agent-token-file %s is empty", c.AgentTokenFile)
	}
	return nil
}

// agentJoinTokens fills in the agent-only credentials of the join handler:
// the agent token of --agent-token (kept in <dir>/agent-token) and the
// bootstrap tokens of `orch token create`, read through client.
func agentJoinTokens(cfg Config, dir string, bundle *pki.Bundle, serverToken string, client kubernetes.Interface,
	log *zap.Logger, jc join.Config) (join.Config, error) {
	_, serverSecret, err := pki.ParseToken(serverToken)
	if err != nil {
		return jc, err
	}
	agentToken, err := pki.WriteAgentToken(filepath.Join(dir, "agent-token"), bundle.CAPEM(), cfg.AgentToken, serverSecret, log.Named("pki"))
	if err != nil {
		return jc, err
	}
	jc.AgentToken = agentToken
	jc.BootstrapTokens = client.CoreV1().Secrets(metav1.NamespaceSystem)
	return jc, nil
}

// statusText is the message of a metav1.Status body, else the body.
func statusText(body []byte) string {
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err == nil && st.Message != "" {
		return st.Message
	}
	return string(bytes.TrimSpace(body))
}
