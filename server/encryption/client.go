package encryption

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/internal/pki"
)

// Client calls a running server's secrets-encrypt endpoints as the admin,
// with the CA and admin certificate of a server data dir.
type Client struct {
	server string
	http   *http.Client
}

// NewClient reads <dataDir>/server/tls/{ca.crt,admin.crt,admin.key} and
// returns a client of server (https://host:port).
func NewClient(server, dataDir string) (*Client, error) {
	cfg, err := pki.AdminClientTLS(filepath.Join(dataDir, "server", "tls"))
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	return &Client{server: strings.TrimSuffix(server, "/"), http: &http.Client{Transport: tr, Timeout: 30 * time.Minute}}, nil
}

// Status fetches the server's encryption status.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var st Status
	return st, c.do(ctx, http.MethodGet, StatusPath, &st)
}

// RotateKeys asks the server to put a new key first.
func (c *Client) RotateKeys(ctx context.Context) (Status, error) {
	var st Status
	return st, c.do(ctx, http.MethodPost, RotateKeyPath, &st)
}

// Reencrypt asks the server to rewrite stale values under the current key.
func (c *Client) Reencrypt(ctx context.Context) (ReencryptResult, error) {
	var res ReencryptResult
	return res, c.do(ctx, http.MethodPost, ReencryptPath, &res)
}

func (c *Client) do(ctx context.Context, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s (is the server running?): %w", method, c.server+path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, c.server+path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			return fmt.Errorf("%s %s: %s", method, path, st.Message)
		}
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(body))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}
