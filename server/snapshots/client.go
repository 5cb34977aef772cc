package snapshots

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/internal/pki"
)

// Client asks a running server for a snapshot, authenticating with the
// admin client certificate in the server's TLS directory.
type Client struct {
	Server string // https://host:port
	http   *http.Client
}

// NewClient reads ca.crt, admin.crt and admin.key from tlsDir.
func NewClient(server, tlsDir string) (*Client, error) {
	cfg, err := pki.AdminClientTLS(tlsDir)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	return &Client{Server: strings.TrimSuffix(server, "/"), http: &http.Client{Transport: tr, Timeout: 10 * time.Minute}}, nil
}

// Save asks the server to save a snapshot.
func (c *Client) Save(ctx context.Context, req SaveRequest) (Info, error) {
	body, _ := json.Marshal(req)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Server+Path, bytes.NewReader(body))
	if err != nil {
		return Info{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hr)
	if err != nil {
		return Info{}, fmt.Errorf("asking %s for a snapshot: %w", c.Server, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Info{}, err
	}
	if resp.StatusCode != http.StatusCreated {
		var st metav1.Status
		if json.Unmarshal(data, &st) == nil && st.Message != "" {
			return Info{}, fmt.Errorf("server %s: %s (HTTP %d)", c.Server, st.Message, resp.StatusCode)
		}
		return Info{}, fmt.Errorf("server %s: HTTP %d: %s", c.Server, resp.StatusCode, bytes.TrimSpace(data))
	}
	var info Info
	if err := json.Unmarshal(data, &info); err != nil {
		return Info{}, fmt.Errorf("server %s: bad answer: %w", c.Server, err)
	}
	return info, nil
}
