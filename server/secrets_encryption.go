package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/encryption"
)

// encryptionConfigPath is the EncryptionConfiguration file of a server
// directory (<data-dir>/server): cred/encryption-config.json, as in k3s.
func encryptionConfigPath(dir string) string {
	return filepath.Join(dir, "cred", encryption.FileName)
}

// openEncryption wraps raw with the secrets encryption of
// --secrets-encryption (the config file is created with a new key on first
// start): everything below the returned store — the Raft log, the FSM's
// state.db and Raft snapshots — holds only ciphertext of the configured
// resources. Without the flag raw is returned as it is, and the Manager
// reports encryption as disabled.
func openEncryption(cfg Config, dir string, raw datastore.Store, log *zap.Logger) (datastore.Store, *encryption.Manager, error) {
	path := encryptionConfigPath(dir)
	log = log.Named("encryption")
	if !cfg.SecretsEncryption {
		if _, err := os.Stat(path); err != nil {
			return raw, encryption.NewManager(path, nil, log), nil
		}
		// The cluster encrypts (the config came with the join, or an
		// earlier start had the flag): leaving it off would store plaintext
		// and fail to read what is stored encrypted.
		log.Info("an encryption config exists: encrypting at rest although --secrets-encryption is not set", zap.String("path", path))
	}
	st, m, err := encryption.Open(path, raw, log)
	if err != nil {
		return nil, nil, err
	}
	return st, m, nil
}

// secretsEncryptHandler serves `orch secrets-encrypt` on the API port to
// the cluster CA's system:masters clients, in front of next (which includes
// the join handler owning the rest of /v1-orch/).
func secretsEncryptHandler(m *encryption.Manager, bundle *pki.Bundle, next http.Handler, log *zap.Logger) http.Handler {
	return encryption.NewHandler(m, auth.NewCertAuthenticator(bundle.CAPool()), log.Named("encryption")).Wrap(next)
}

// encryptionPeers lists the other servers as clients authenticated with
// this server's admin certificate, for a cluster-wide key rotation.
func encryptionPeers(client kubernetes.Interface, selfID string, bundle *pki.Bundle) encryption.Peers {
	return func(ctx context.Context) ([]*encryption.Client, error) {
		urls, err := peerServerURLs(ctx, client, selfID)
		if err != nil {
			return nil, fmt.Errorf("listing the other servers: %w", err)
		}
		cert, err := tls.X509KeyPair(bundle.AdminCertPEM(), bundle.AdminKeyPEM())
		if err != nil {
			return nil, err
		}
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: bundle.CAPool(), Certificates: []tls.Certificate{cert},
			ServerName: "kubernetes"}
		var out []*encryption.Client
		for _, u := range urls {
			out = append(out, encryption.NewClientTLS(u, cfg))
		}
		return out, nil
	}
}
