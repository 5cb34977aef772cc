package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	agentjoin "github.com/orch/orch/agent/join"
	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/join"
)

// peersFile keeps the Raft addresses a joined server learnt at its join.
const peersFile = "raft-peers.json"

// sharedFiles are the files, relative to <data-dir>/server, that every
// server of a cluster shares: the CAs, the ServiceAccount signing key and
// the secrets-encryption config. ca.crt comes last: its presence marks a
// completed join.
func sharedFiles() []string {
	return []string{"tls/ca.key", "tls/front-proxy/ca.key", "tls/front-proxy/ca.crt",
		"tls/service-account.key", "cred/encryption-config.json", "tls/ca.crt"}
}

// serverBootstrap answers a joining server with this server's shared files
// and the current Raft members.
func serverBootstrap(dir string, store *datastore.RaftStore) func() (*join.ServerBootstrap, error) {
	return func() (*join.ServerBootstrap, error) {
		b := &join.ServerBootstrap{Files: map[string][]byte{}}
		for _, name := range sharedFiles() {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", name, err)
			}
			b.Files[name] = data
		}
		if store == nil {
			return b, nil // an external etcd: no Raft to join
		}
		ms, err := store.Members()
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			b.RaftPeers = append(b.RaftPeers, m.Addr)
		}
		return b, nil
	}
}

// joinAsServer fetches the cluster's shared files from cfg.JoinServer on
// the first start of a joining server (pinning the CA by the token's hash)
// and returns the Raft peers to ask for membership. Later starts read the
// peers kept from the first one.
func joinAsServer(ctx context.Context, cfg Config, dir string, log *zap.Logger) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "tls", "ca.crt")); err == nil {
		var peers []string
		if b, err := os.ReadFile(filepath.Join(dir, peersFile)); err == nil {
			_ = json.Unmarshal(b, &peers)
		}
		return peers, nil
	}
	delay := time.Second
	for {
		b, err := fetchServerBootstrap(ctx, cfg.JoinServer, cfg.Token)
		if err == nil {
			return b.RaftPeers, writeShared(dir, b)
		}
		if errors.Is(err, agentjoin.ErrCAMismatch) || errors.Is(err, agentjoin.ErrUnpinnedToken) || errors.Is(err, agentjoin.ErrRejected) {
			return nil, fmt.Errorf("joining %s: %w", cfg.JoinServer, err)
		}
		log.Warn("fetching the cluster's shared secrets failed; retrying", zap.String("server", cfg.JoinServer),
			zap.Duration("in", delay), zap.Error(err))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("joining %s: %w", cfg.JoinServer, err)
		case <-time.After(delay):
		}
		delay = min(2*delay, 15*time.Second)
	}
}

func fetchServerBootstrap(ctx context.Context, serverURL, token string) (*join.ServerBootstrap, error) {
	caPEM, secret, err := agentjoin.PinnedCA(ctx, serverURL, token)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(serverURL, "/")+join.ServerBootstrapPath, http.NoBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%w (%s): %s", agentjoin.ErrRejected, resp.Status, statusText(body))
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s answered %s: %s", serverURL, resp.Status, bytes.TrimSpace(body))
	}
	var b join.ServerBootstrap
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, fmt.Errorf("decoding the server bootstrap answer: %w", err)
	}
	if len(b.Files["tls/ca.crt"]) == 0 || len(b.Files["tls/ca.key"]) == 0 {
		return nil, errors.New("the server bootstrap answer lacks the CA")
	}
	return &b, nil
}

// writeShared writes the received files (only the known names; keys 0600)
// and the peers, ca.crt last.
func writeShared(dir string, b *join.ServerBootstrap) error {
	for _, name := range sharedFiles() {
		data, ok := b.Files[name]
		if !ok {
			continue
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		mode := os.FileMode(0o600)
		if strings.HasSuffix(name, ".crt") {
			mode = 0o644
		}
		if err := os.WriteFile(path, data, mode); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	peers, _ := json.Marshal(b.RaftPeers)
	return os.WriteFile(filepath.Join(dir, peersFile), peers, 0o600)
}

// leaveCluster removes this server from the Raft cluster (orch server
// --remove); the last member cannot leave.
func leaveCluster(ctx context.Context, store *datastore.RaftStore, log *zap.Logger) error {
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := store.WaitLeader(wctx); err != nil {
		return fmt.Errorf("--remove: %w", err)
	}
	ms, err := store.Members()
	if err != nil {
		return fmt.Errorf("--remove: %w", err)
	}
	if len(ms) < 2 {
		return errors.New("--remove: this server is the cluster's only member; stop it instead")
	}
	if err := store.RemoveMember(wctx, store.ID()); err != nil {
		return fmt.Errorf("--remove: %w", err)
	}
	log.Info("removed this server from the Raft cluster; delete <data-dir>/server/db before it joins a cluster again",
		zap.String("raftID", store.ID()))
	return nil
}
