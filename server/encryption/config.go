package encryption

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// The file's kind and apiVersion, as kube-apiserver reads them.
const (
	Kind       = "EncryptionConfiguration"
	APIVersion = "apiserver.config.k8s.io/v1"
)

// Provider names as they appear in the config and in the value prefixes.
const (
	ProviderAESCBC   = "aescbc"
	ProviderAESGCM   = "aesgcm"
	ProviderIdentity = "identity"
)

// ErrInvalidConfig is wrapped by every config validation error.
var ErrInvalidConfig = errors.New("invalid encryption configuration")

// Config is upstream's EncryptionConfiguration (apiserver.config.k8s.io/v1),
// with the JSON field names of k8s.io/apiserver/pkg/apis/apiserver/v1.
type Config struct {
	Kind       string           `json:"kind"`
	APIVersion string           `json:"apiVersion"`
	Resources  []ResourceConfig `json:"resources"`
}

// ResourceConfig lists resources and the providers that protect them; the
// first provider encrypts, all of them decrypt.
type ResourceConfig struct {
	Resources []string         `json:"resources"`
	Providers []ProviderConfig `json:"providers"`
}

// ProviderConfig holds exactly one provider.
type ProviderConfig struct {
	AESGCM   *AESConfig      `json:"aesgcm,omitempty"`
	AESCBC   *AESConfig      `json:"aescbc,omitempty"`
	Identity *IdentityConfig `json:"identity,omitempty"`
	// Secretbox and KMS are parsed only to refuse them with a clear error.
	Secretbox json.RawMessage `json:"secretbox,omitempty"`
	KMS       json.RawMessage `json:"kms,omitempty"`
}

// AESConfig is the key list of an aesgcm or aescbc provider; the first key
// encrypts.
type AESConfig struct {
	Keys []Key `json:"keys"`
}

// Key is one named key; Secret is the base64 of 16, 24 or 32 random bytes.
// Never log it.
type Key struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

// IdentityConfig stores values as they are.
type IdentityConfig struct{}

// name returns the provider's config name ("" when none is set).
func (p ProviderConfig) name() string {
	switch {
	case p.AESCBC != nil:
		return ProviderAESCBC
	case p.AESGCM != nil:
		return ProviderAESGCM
	case p.Identity != nil:
		return ProviderIdentity
	}
	return ""
}

// aes returns the provider's key list (nil for identity).
func (p ProviderConfig) aes() *AESConfig {
	if p.AESCBC != nil {
		return p.AESCBC
	}
	return p.AESGCM
}

// Parse decodes and validates a config file (YAML or JSON). Unknown fields
// are refused, so a typo is not silently an unencrypted cluster.
func Parse(data []byte) (*Config, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Marshal returns the config as indented JSON, the format of the file orch writes.
func (c *Config) Marshal() ([]byte, error) {
	out, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding encryption configuration: %w", err)
	}
	return append(out, '\n'), nil
}

// Hash is the sha256 (hex) of a config file's bytes, as status prints it.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Validate checks the config the way kube-apiserver does; each error names
// the field at fault.
func (c *Config) Validate() error {
	var errs []error
	if c.Kind != Kind {
		errs = append(errs, fmt.Errorf("kind: must be %q, not %q", Kind, c.Kind))
	}
	if c.APIVersion != APIVersion {
		errs = append(errs, fmt.Errorf("apiVersion: must be %q, not %q", APIVersion, c.APIVersion))
	}
	if len(c.Resources) == 0 {
		errs = append(errs, errors.New("resources: at least one resources entry is required"))
	}
	for i, rc := range c.Resources {
		errs = append(errs, rc.validate(fmt.Sprintf("resources[%d]", i))...)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

func (rc ResourceConfig) validate(path string) []error {
	var errs []error
	if len(rc.Resources) == 0 {
		errs = append(errs, fmt.Errorf("%s.resources: at least one resource is required", path))
	}
	seen := map[string]bool{}
	for j, r := range rc.Resources {
		if err := validResource(r); err != nil {
			errs = append(errs, fmt.Errorf("%s.resources[%d] %q: %w", path, j, r, err))
		}
		if seen[r] {
			errs = append(errs, fmt.Errorf("%s.resources[%d] %q: the same resource cannot be specified multiple times", path, j, r))
		}
		seen[r] = true
	}
	if err := overlap(rc.Resources); err != nil {
		errs = append(errs, fmt.Errorf("%s.resources: %w", path, err))
	}
	if len(rc.Providers) == 0 {
		errs = append(errs, fmt.Errorf("%s.providers: at least one provider is required (e.g. aescbc, then identity)", path))
	}
	for j, p := range rc.Providers {
		errs = append(errs, p.validate(fmt.Sprintf("%s.providers[%d]", path, j))...)
	}
	return errs
}

func (p ProviderConfig) validate(path string) []error {
	set := 0
	for _, present := range []bool{p.AESCBC != nil, p.AESGCM != nil, p.Identity != nil, p.Secretbox != nil, p.KMS != nil} {
		if present {
			set++
		}
	}
	switch {
	case set == 0:
		return []error{fmt.Errorf("%s: provider does not contain any of the expected providers: aesgcm, aescbc, identity", path)}
	case set > 1:
		return []error{fmt.Errorf("%s: more than one provider specified in a single element, should split into different list elements", path)}
	case p.Secretbox != nil:
		return []error{fmt.Errorf("%s.secretbox: not supported by orch; use aescbc or aesgcm", path)}
	case p.KMS != nil:
		return []error{fmt.Errorf("%s.kms: not supported by orch; use aescbc or aesgcm", path)}
	case p.Identity != nil:
		return nil
	}
	return validateKeys(p.aes().Keys, fmt.Sprintf("%s.%s.keys", path, p.name()))
}

func validateKeys(keys []Key, path string) []error {
	if len(keys) == 0 {
		return []error{fmt.Errorf("%s: at least one key is required", path)}
	}
	var errs []error
	names := map[string]bool{}
	for i, k := range keys {
		kp := fmt.Sprintf("%s[%d]", path, i)
		if k.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: a key name is required", kp))
		} else if names[k.Name] {
			errs = append(errs, fmt.Errorf("%s.name: duplicate key name %q", kp, k.Name))
		}
		names[k.Name] = true
		if _, err := decodeKey(k.Secret); err != nil {
			errs = append(errs, fmt.Errorf("%s.secret: %w", kp, err))
		}
	}
	return errs
}

// decodeKey decodes a key secret; its errors never contain the secret.
func decodeKey(secret string) ([]byte, error) {
	if secret == "" {
		return nil, errors.New("a secret is required")
	}
	b, err := base64.StdEncoding.DecodeString(secret)
	if err != nil {
		return nil, errors.New("secrets must be base64 encoded")
	}
	switch len(b) {
	case 16, 24, 32:
		return b, nil
	}
	return nil, fmt.Errorf("secret is not of the expected length, got %d, expected one of [16 24 32]", len(b))
}

// validResource checks one resource name as upstream does.
func validResource(r string) error {
	switch {
	case r == "":
		return errors.New("resource name is empty")
	case strings.ToLower(r) != r:
		return errors.New("resource name should not contain capital letters")
	case r == "*":
		return errors.New("use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources")
	case r == "apiserveripinfo" || r == "serviceipallocations" || r == "servicenodeportallocations":
		return errors.New("resources which do not have REST API/s cannot be encrypted")
	}
	res, group := splitResource(r)
	switch {
	case group == "events.k8s.io":
		return errors.New("'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file")
	case group == "extensions":
		return errors.New("'extensions' group has been removed and cannot be used for encryption")
	case group == "*" && res != "*":
		return errors.New("encrypting the same resource across groups is not supported")
	}
	return nil
}

// overlap refuses entries that mask each other, like 'secrets' with '*.'.
func overlap(resources []string) error {
	for i, a := range resources {
		ra, ga := splitResource(a)
		for j, b := range resources {
			rb, gb := splitResource(b)
			if i == j || a == b {
				continue
			}
			if (ra == "*" && ga == "*") || (ga == gb && (ra == "*" || rb == "*")) {
				return errors.New("using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked")
			}
		}
	}
	return nil
}

// splitResource splits "resource.group" at the first dot, like
// schema.ParseGroupResource: "secrets" → ("secrets", ""), "*." → ("*", "").
func splitResource(r string) (resource, group string) {
	resource, group, _ = strings.Cut(r, ".")
	return resource, group
}
