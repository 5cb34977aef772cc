package pki

import (
	"crypto/ecdsa"
	"fmt"
	"path/filepath"
)

// ServiceAccountKeyFile is the ServiceAccount token signing key, kept beside
// the CA (and handed to joining servers with it).
const ServiceAccountKeyFile = "service-account.key"

// LoadOrCreateServiceAccountKey loads dir/service-account.key, making an
// ECDSA P-256 key (mode 0600) on first start.
func LoadOrCreateServiceAccountKey(dir string) (*ecdsa.PrivateKey, error) {
	if err := ensurePrivateDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ServiceAccountKeyFile)
	b, err := readOptional(path)
	if err != nil {
		return nil, err
	}
	if b != nil {
		k, err := parseKeyPEM(b)
		if err != nil {
			return nil, fmt.Errorf("service account key %s: %w", path, err)
		}
		ek, ok := k.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("service account key %s: want an ECDSA key, got %T", path, k)
		}
		return ek, nil
	}
	k, err := newKey()
	if err != nil {
		return nil, err
	}
	pemKey, err := encodeKey(k)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(path, pemKey, 0o600); err != nil {
		return nil, fmt.Errorf("write service account key: %w", err)
	}
	return k, nil
}
