package encryption

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// FileName is the config file under <data-dir>/server/cred, as in k3s.
const FileName = "encryption-config.json"

// DefaultKeyName names the first key, as k3s does.
const DefaultKeyName = "aescbckey"

// Path returns the config file of a server data dir.
func Path(dataDir string) string {
	return filepath.Join(dataDir, "server", "cred", FileName)
}

// NewConfig returns the config orch writes on first start: Secrets
// encrypted with one new random 32-byte aescbc key, identity last so values
// written before encryption was turned on stay readable. aescbc, like k3s:
// its random IVs have no per-key write limit, while AES-GCM with random
// nonces must be rotated every ~200k writes (upstream's guidance), which a
// key nobody rotates on a small cluster would not be.
func NewConfig() (*Config, error) {
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	return &Config{Kind: Kind, APIVersion: APIVersion, Resources: []ResourceConfig{{
		Resources: []string{"secrets"},
		Providers: []ProviderConfig{
			{AESCBC: &AESConfig{Keys: []Key{{Name: DefaultKeyName, Secret: secret}}}},
			{Identity: &IdentityConfig{}},
		},
	}}}, nil
}

// newSecret returns the base64 of 32 random bytes.
func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating an encryption key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Rotate returns a copy of c with a new random key first in the first
// provider of every resources entry (older keys stay, for reading): after a
// Reencrypt every value is under the new key. The first provider must be
// aescbc or aesgcm.
func Rotate(c *Config, now time.Time) (*Config, error) {
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	out, err := clone(c)
	if err != nil {
		return nil, err
	}
	for i := range out.Resources {
		p := out.Resources[i].Providers[0]
		a := p.aes()
		if a == nil {
			return nil, fmt.Errorf("resources[%d]: the first provider is %s, so nothing is encrypted: put an aescbc or aesgcm provider first to rotate keys", i, p.name())
		}
		name := fmt.Sprintf("%skey-%s", p.name(), now.UTC().Format("20060102T150405Z"))
		for n := 2; hasKey(a.Keys, name); n++ {
			name = fmt.Sprintf("%skey-%s-%d", p.name(), now.UTC().Format("20060102T150405Z"), n)
		}
		a.Keys = append([]Key{{Name: name, Secret: secret}}, a.Keys...)
	}
	return out, out.Validate()
}

func hasKey(keys []Key, name string) bool {
	for _, k := range keys {
		if k.Name == name {
			return true
		}
	}
	return false
}

// clone deep-copies c through its JSON form.
func clone(c *Config) (*Config, error) {
	data, err := c.Marshal()
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Load reads and validates the config file at path.
func Load(path string) (*Config, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading encryption config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, data, nil
}

// LoadOrCreate loads the config file at path, or writes NewConfig there
// when it does not exist. created tells which.
func LoadOrCreate(path string) (c *Config, data []byte, created bool, err error) {
	c, data, err = Load(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return c, data, false, err
	}
	if c, err = NewConfig(); err != nil {
		return nil, nil, false, err
	}
	if data, err = c.Marshal(); err != nil {
		return nil, nil, false, err
	}
	if err := writeFile(path, data); err != nil {
		return nil, nil, false, err
	}
	return c, data, true, nil
}

// writeFile atomically replaces path with data (mode 0600; its directory
// is created with mode 0700).
func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing encryption config: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing encryption config: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing encryption config: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing encryption config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing encryption config: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing encryption config: %w", err)
	}
	return nil
}
