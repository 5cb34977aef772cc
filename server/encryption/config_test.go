package encryption

import (
	"errors"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	yamlCfg := `
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets, configmaps]
    providers:
      - aesgcm:
          keys:
            - name: key1
              secret: ` + keyB64(32, 'a') + `
      - aescbc:
          keys:
            - name: key0
              secret: ` + keyB64(16, 'b') + `
      - identity: {}
  - resources: ["*.apps"]
    providers:
      - identity: {}
`
	c, err := Parse([]byte(yamlCfg))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Resources) != 2 || c.Resources[0].Providers[0].name() != ProviderAESGCM {
		t.Fatalf("parsed %+v", c)
	}
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(data); err != nil {
		t.Fatalf("re-parsing the marshalled config: %v", err)
	}
}

func TestParseInvalid(t *testing.T) {
	good := keyB64(32, 'g')
	head := "kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\n"
	for _, tc := range []struct {
		name, cfg, want string
	}{
		{"kind", "kind: Foo\napiVersion: apiserver.config.k8s.io/v1\nresources: [{resources: [secrets], providers: [{identity: {}}]}]", `kind: must be "EncryptionConfiguration"`},
		{"apiVersion", "kind: EncryptionConfiguration\napiVersion: v1\nresources: [{resources: [secrets], providers: [{identity: {}}]}]", `apiVersion: must be "apiserver.config.k8s.io/v1"`},
		{"no resources", head + "resources: []", "resources: at least one resources entry is required"},
		{"empty resource list", head + "resources: [{resources: [], providers: [{identity: {}}]}]", "resources[0].resources: at least one resource is required"},
		{"no providers", head + "resources: [{resources: [secrets], providers: []}]", "resources[0].providers: at least one provider is required"},
		{"empty provider", head + "resources: [{resources: [secrets], providers: [{}]}]", "resources[0].providers[0]: provider does not contain any"},
		{"two in one", head + "resources: [{resources: [secrets], providers: [{identity: {}, aescbc: {keys: [{name: k, secret: " + good + "}]}}]}]", "more than one provider specified in a single element"},
		{"secretbox", head + "resources: [{resources: [secrets], providers: [{secretbox: {keys: [{name: k, secret: " + good + "}]}}]}]", "secretbox: not supported by orch"},
		{"kms", head + "resources: [{resources: [secrets], providers: [{kms: {name: vault}}]}]", "kms: not supported by orch"},
		{"no keys", head + "resources: [{resources: [secrets], providers: [{aescbc: {keys: []}}]}]", "aescbc.keys: at least one key is required"},
		{"no key name", head + "resources: [{resources: [secrets], providers: [{aescbc: {keys: [{secret: " + good + "}]}}]}]", "keys[0].name: a key name is required"},
		{"duplicate key name", head + "resources: [{resources: [secrets], providers: [{aesgcm: {keys: [{name: k, secret: " + good + "}, {name: k, secret: " + good + "}]}}]}]", `keys[1].name: duplicate key name "k"`},
		{"no secret", head + "resources: [{resources: [secrets], providers: [{aescbc: {keys: [{name: k}]}}]}]", "keys[0].secret: a secret is required"},
		{"bad base64", head + "resources: [{resources: [secrets], providers: [{aescbc: {keys: [{name: k, secret: 'not base64!'}]}}]}]", "secrets must be base64 encoded"},
		{"key length", head + "resources: [{resources: [secrets], providers: [{aescbc: {keys: [{name: k, secret: " + keyB64(20, 'x') + "}]}}]}]", "got 20, expected one of [16 24 32]"},
		{"capitals", head + "resources: [{resources: [Secrets], providers: [{identity: {}}]}]", "should not contain capital letters"},
		{"star", head + "resources: [{resources: ['*'], providers: [{identity: {}}]}]", "use '*.' to encrypt all the resources"},
		{"overlap", head + "resources: [{resources: [secrets, '*.'], providers: [{identity: {}}]}]", "overlapping resources"},
		{"duplicate resource", head + "resources: [{resources: [secrets, secrets], providers: [{identity: {}}]}]", "cannot be specified multiple times"},
		{"events group", head + "resources: [{resources: [events.events.k8s.io], providers: [{identity: {}}]}]", "Use 'events' instead"},
		{"across groups", head + "resources: [{resources: [secrets.*], providers: [{identity: {}}]}]", "across groups is not supported"},
		{"unknown field", head + "resources: [{resources: [secrets], providers: [{aes-cbc: {}}]}]", `unknown field "aes-cbc"`},
		{"not yaml", "{{{", "invalid encryption configuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.cfg))
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v; want ErrInvalidConfig containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), good) || strings.Contains(err.Error(), keyB64(20, 'x')) {
				t.Fatalf("error leaks a key: %v", err)
			}
		})
	}
}
