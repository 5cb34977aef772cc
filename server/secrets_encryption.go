package server

import (
	"net/http"
	"os"
	"path/filepath"

	"go.uber.org/zap"

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
		if _, err := os.Stat(path); err == nil {
			log.Warn("an encryption config exists but --secrets-encryption is not set: values stored encrypted cannot be read",
				zap.String("path", path))
		}
		return raw, encryption.NewManager(path, nil, log), nil
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
