package encryption

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/datastore"
)

// ErrDisabled is returned by the Manager of a server started without
// --secrets-encryption.
var ErrDisabled = errors.New("secrets encryption is not enabled: start the server with --secrets-encryption")

// Manager owns the config file of one server and the Store that applies it.
// Its methods serialise with each other.
type Manager struct {
	path  string
	store *Store // nil: encryption is off
	log   *zap.Logger
	now   func() time.Time
	mu    sync.Mutex
	peers Peers // the other servers, for RotateKeysCluster
}

// Open loads (or on first start creates) the config file at path and wraps
// inner with it.
func Open(path string, inner datastore.Store, log *zap.Logger) (*Store, *Manager, error) {
	if log == nil {
		log = zap.NewNop()
	}
	c, data, created, err := LoadOrCreate(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := NewStore(inner, c, log)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	verb := "loaded"
	if created {
		verb = "created"
	}
	log.Info(verb+" the encryption config; values of its resources are encrypted at rest",
		zap.String("path", path), zap.String("hash", Hash(data)), zap.Strings("resources", resourceNames(c)))
	return st, NewManager(path, st, log), nil
}

// NewManager returns the Manager of the config file at path; store nil
// means encryption is off (Status says so, the rest fail with ErrDisabled).
func NewManager(path string, store *Store, log *zap.Logger) *Manager {
	if log == nil {
		log = zap.NewNop()
	}
	return &Manager{path: path, store: store, log: log, now: time.Now}
}

// KeyStatus is one configured key.
type KeyStatus struct {
	Provider string `json:"provider"`
	Name     string `json:"name"`
	Active   bool   `json:"active"` // encrypts new writes
}

// Status is what `orch secrets-encrypt status` prints.
type Status struct {
	Enabled    bool        `json:"enabled"`
	Provider   string      `json:"provider,omitempty"`  // first provider of the Secrets entry
	ActiveKey  string      `json:"activeKey,omitempty"` // its first key
	Resources  []string    `json:"resources,omitempty"`
	Keys       []KeyStatus `json:"keys,omitempty"`
	ConfigHash string      `json:"configHash,omitempty"`
	ConfigPath string      `json:"configPath,omitempty"`
}

// Status reads the config file and describes it.
func (m *Manager) Status() (Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.store == nil {
		return Status{}, nil
	}
	c, data, err := Load(m.path)
	if err != nil {
		return Status{}, err
	}
	return describe(c, data, m.path), nil
}

func describe(c *Config, data []byte, path string) Status {
	st := Status{ConfigHash: Hash(data), ConfigPath: path, Resources: resourceNames(c)}
	main := secretsEntry(c)
	st.Provider = main.Providers[0].name()
	st.Enabled = st.Provider != ProviderIdentity
	if a := main.Providers[0].aes(); a != nil {
		st.ActiveKey = a.Keys[0].Name
	}
	for _, p := range main.Providers {
		if a := p.aes(); a != nil {
			for _, k := range a.Keys {
				st.Keys = append(st.Keys, KeyStatus{Provider: p.name(), Name: k.Name, Active: k.Name == st.ActiveKey && p.name() == st.Provider})
			}
		}
	}
	return st
}

// secretsEntry is the resources entry that covers Secrets (the first
// entry when none does), the one status describes.
func secretsEntry(c *Config) ResourceConfig {
	for _, rc := range c.Resources {
		for _, r := range rc.Resources {
			if newMatcher(r).match(storagePrefix + "secrets/default/x") {
				return rc
			}
		}
	}
	return c.Resources[0]
}

func resourceNames(c *Config) []string {
	var out []string
	for _, rc := range c.Resources {
		out = append(out, rc.Resources...)
	}
	return out
}

// RotateKeys puts a new random key first (older keys still decrypt), writes
// the file and switches the running store to it. Run Reencrypt next.
func (m *Manager) RotateKeys() (Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
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
	data, err := next.Marshal()
	if err != nil {
		return Status{}, err
	}
	if err := m.installLocked(next, data); err != nil {
		return Status{}, err
	}
	st := describe(next, data, m.path)
	m.log.Info("rotated the encryption key; run `orch secrets-encrypt reencrypt` to rewrite stored values with it",
		zap.String("activeKey", st.ActiveKey), zap.String("hash", st.ConfigHash))
	return st, nil
}

// Reencrypt rewrites every stored value of the configured resources that is
// not under the current first provider and key.
func (m *Manager) Reencrypt(ctx context.Context) (ReencryptResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.store == nil {
		return ReencryptResult{}, ErrDisabled
	}
	res, err := m.store.Reencrypt(ctx)
	if err != nil {
		return res, fmt.Errorf("reencrypt: %w", err)
	}
	m.log.Info("re-encrypted stored values", zap.Int("scanned", res.Scanned), zap.Int("rewritten", res.Rewritten))
	return res, nil
}

// ConfigBytes returns the config file as it is on disk, for a joining
// server (it holds the keys: send it only over the authenticated join).
func (m *Manager) ConfigBytes() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, data, err := Load(m.path)
	return data, err
}

// Install validates a config file received from another server, writes it
// and, when encryption is on, switches the running store to it.
func (m *Manager) Install(data []byte) error {
	c, err := Parse(data)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.installLocked(c, data)
}

// InstallFile writes a config file received from another server to path
// before the store is opened (a joining server, before Open).
func InstallFile(path string, data []byte) error {
	if _, err := Parse(data); err != nil {
		return err
	}
	return writeFile(path, data)
}

func (m *Manager) installLocked(c *Config, data []byte) error {
	if m.store != nil {
		// Check that the store accepts it before the file changes.
		if _, err := newTransformer(c); err != nil {
			return err
		}
	}
	if err := writeFile(m.path, data); err != nil {
		return err
	}
	if m.store == nil {
		return nil
	}
	return m.store.SetConfig(c)
}
