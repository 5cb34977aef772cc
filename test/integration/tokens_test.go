package integration

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentjoin "github.com/orch/orch/agent/join"
	"github.com/orch/orch/internal/bootstraptoken"
	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/test/testutil"
)

// TestBootstrapTokens drives `orch token create|list|delete` against a real
// server started with --agent-token: an agent joins with a created token
// (the join orch agent runs at start) and with the agent token, neither
// opens /v1-orch/server-bootstrap (403) while the server token does, a
// deleted token and an expired one are refused with a Status saying why,
// and the token cleaner deletes the expired token's Secret.
func TestBootstrapTokens(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--agent-token", "agent-only-s3cret"}})
	url := fmt.Sprintf("https://127.0.0.1:%d", s.HTTPSPort)
	cli := func(sub string, args ...string) string { // flags go before positional arguments
		return orchCLI(t, append([]string{"token", sub, "--data-dir", s.DataDir, "--server", url}, args...)...)
	}
	full := strings.TrimSpace(cli("create", "--ttl", "1h", "--description", "e2e token"))
	hash, idSecret, err := pki.ParseToken(full)
	must(t, err, "parse created token %q", full)
	tok, err := bootstraptoken.Parse(idSecret)
	must(t, err, "created token is not <id>.<secret>")
	caPEM, err := os.ReadFile(filepath.Join(s.DataDir, "server", "tls", "ca.crt"))
	must(t, err, "read CA")
	if hash != pki.CAHash(caPEM) {
		t.Fatalf("token pins %s, the CA is %s", hash, pki.CAHash(caPEM))
	}
	if out := cli("list"); !strings.Contains(out, tok.ID) || !strings.Contains(out, "e2e token") ||
		!strings.Contains(out, "authentication,signing") || strings.Contains(out, tok.Secret) {
		t.Fatalf("token list:\n%s", out)
	}

	joinNode(t, url, full, "tok-node-1", nil)
	agentTok := pki.FormatAgentToken(hash, "agent-only-s3cret")
	joinNode(t, url, agentTok, "tok-node-2", nil)
	serverTok, err := os.ReadFile(filepath.Join(s.DataDir, "server", "token"))
	must(t, err, "read server token")
	serverBootstrap(t, url, caPEM, strings.TrimSpace(string(serverTok)), 200, "")
	serverBootstrap(t, url, caPEM, full, 403, "may only join agents")
	serverBootstrap(t, url, caPEM, agentTok, 403, "may only join agents")

	serverJoinRefused(t, url, full)

	if out := cli("delete", tok.ID); !strings.Contains(out, tok.ID) {
		t.Fatalf("token delete printed %q", out)
	}
	joinNode(t, url, full, "tok-node-3", []string{"401", "does not exist"})

	short := strings.TrimSpace(cli("create", "--ttl", "1s"))
	_, shortSecret, _ := pki.ParseToken(short)
	shortTok, _ := bootstraptoken.Parse(shortSecret)
	time.Sleep(2 * time.Second)
	joinNode(t, url, short, "tok-node-4", []string{"401"})
	ctx := ctxT(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s.Clientset.CoreV1().Secrets("kube-system").Get(ctx, shortTok.SecretName(), metav1.GetOptions{})
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the expired token's Secret %s was not deleted by the token cleaner", shortTok.SecretName())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if out := cli("list"); strings.Contains(out, shortTok.ID) {
		t.Fatalf("expired token still listed:\n%s", out)
	}
}

// joinNode runs the agent's join with token; want nil = it must succeed,
// else the refusal must mention every string of want.
func joinNode(t *testing.T, url, token, node string, want []string) {
	t.Helper()
	creds, err := agentjoin.JoinWithOptions(ctxT(t), agentjoin.Options{ServerURL: url, Token: token, NodeName: node, Dir: t.TempDir()})
	if want == nil {
		must(t, err, "join %s", node)
		if len(creds.CertPEM) == 0 {
			t.Fatalf("join %s: no certificate", node)
		}
		return
	}
	if !errors.Is(err, agentjoin.ErrRejected) {
		t.Fatalf("join %s: %v, want a refusal", node, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("join %s refused with %q, want it to mention %q", node, err, w)
		}
	}
}

// serverBootstrap posts to /v1-orch/server-bootstrap as a joining server.
func serverBootstrap(t *testing.T, url string, caPEM []byte, token string, code int, msg string) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url+"/v1-orch/server-bootstrap", http.NoBody)
	must(t, err, "request")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	must(t, err, "POST server-bootstrap")
	defer resp.Body.Close()
	var st metav1.Status
	_ = json.NewDecoder(resp.Body).Decode(&st)
	if resp.StatusCode != code || (code != 200 && !strings.Contains(st.Message, msg)) {
		t.Fatalf("server-bootstrap: %d %q, want %d mentioning %q", resp.StatusCode, st.Message, code, msg)
	}
}

// serverJoinRefused runs `orch server --server url --token token`, which
// must stop at once with the 403's message.
func serverJoinRefused(t *testing.T, url, token string) {
	t.Helper()
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config.yaml")
	must(t, os.WriteFile(cfgFile, nil, 0o600), "write config")
	ports := testutil.FreePorts(t, 2)
	cmd := exec.CommandContext(ctxT(t), testutil.Binary(t), "server", "--config", cfgFile, "--data-dir", filepath.Join(dir, "data"),
		"--https-listen-port", strconv.Itoa(ports[0]), "--raft-port", strconv.Itoa(ports[1]), "--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1", "--write-kubeconfig", filepath.Join(dir, "kubeconfig.yaml"), "--disable-agent",
		"--server", url, "--token", token)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "may only join agents") {
		t.Fatalf("orch server --server with a bootstrap token: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("orch server --server with a bootstrap token: %s", lines[len(lines)-1])
}
