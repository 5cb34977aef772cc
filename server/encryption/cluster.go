package encryption

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
)

// InstallPath is where a server pushes a rotated config to the other
// servers of its cluster (admin client certificate, like the others).
const InstallPath = PathPrefix + "install"

// Peers lists the other servers of the cluster as clients to push a config
// to; nil on a single server.
type Peers func(ctx context.Context) ([]*Client, error)

// SetPeers makes RotateKeysCluster reach the other servers.
func (m *Manager) SetPeers(p Peers) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.peers = p
}

// NewClientTLS returns a client of server with a ready TLS configuration
// (a server's own CA pool and admin certificate).
func NewClientTLS(server string, cfg *tls.Config) *Client {
	tr := &http.Transport{TLSClientConfig: cfg}
	return &Client{server: strings.TrimSuffix(server, "/"), http: &http.Client{Transport: tr, Timeout: time.Minute}}
}

// Install pushes a config file to the server.
func (c *Client) Install(ctx context.Context, data []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.server+InstallPath, bytes.NewReader(data))
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("pushing the encryption config to %s: %w", c.server, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pushing the encryption config to %s: %s", c.server, resp.Status)
	}
	return nil
}

// RotateKeysCluster rotates the key on every server of the cluster in two
// phases, so that no server ever meets a value it cannot read: first every
// server learns the new key as a second, decrypt-only key; then every
// server makes it the first. A server that cannot be reached in the first
// phase stops the rotation before any value is written with the new key.
func (m *Manager) RotateKeysCluster(ctx context.Context) (Status, error) {
	m.mu.Lock()
	peers := m.peers
	m.mu.Unlock()
	if peers == nil {
		return m.RotateKeys()
	}
	if m.store == nil {
		return Status{}, ErrDisabled
	}
	c, _, err := Load(m.path)
	if err != nil {
		return Status{}, err
	}
	next, err := Rotate(c, m.now())
	if err != nil {
		return Status{}, err
	}
	prepared, err := clone(next)
	if err != nil {
		return Status{}, err
	}
	for i := range prepared.Resources {
		if a := prepared.Resources[i].Providers[0].aes(); a != nil && len(a.Keys) > 1 {
			a.Keys[0], a.Keys[1] = a.Keys[1], a.Keys[0]
		}
	}
	others, err := peers(ctx)
	if err != nil {
		return Status{}, err
	}
	for _, phase := range []*Config{prepared, next} {
		data, err := phase.Marshal()
		if err != nil {
			return Status{}, err
		}
		for _, p := range others {
			if err := p.Install(ctx, data); err != nil {
				return Status{}, err
			}
		}
		if err := m.Install(data); err != nil {
			return Status{}, err
		}
	}
	st, err := m.Status()
	if err == nil {
		m.log.Info("rotated the encryption key on every server; run `orch secrets-encrypt reencrypt` next",
			zap.Int("servers", len(others)+1), zap.String("activeKey", st.ActiveKey))
	}
	return st, err
}
