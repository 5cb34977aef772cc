package encryption

import (
	"encoding/base64"
	"strings"
	"testing"
)

// keyB64 returns a deterministic base64 key of n bytes filled with b.
func keyB64(n int, b byte) string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(rune(b)), n))[:n])
}

// testConfig returns a config for resources whose first provider is
// provider (aescbc or aesgcm) with the named keys, identity last.
func testConfig(resources []string, provider string, keys ...Key) *Config {
	p := ProviderConfig{}
	if provider == ProviderAESGCM {
		p.AESGCM = &AESConfig{Keys: keys}
	} else {
		p.AESCBC = &AESConfig{Keys: keys}
	}
	return &Config{Kind: Kind, APIVersion: APIVersion, Resources: []ResourceConfig{{
		Resources: resources,
		Providers: []ProviderConfig{p, {Identity: &IdentityConfig{}}},
	}}}
}

func mustTransformer(t *testing.T, c *Config) *transformer {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	tr, err := newTransformer(c)
	if err != nil {
		t.Fatalf("transformer: %v", err)
	}
	return tr
}
