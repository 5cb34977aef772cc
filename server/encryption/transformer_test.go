package encryption

import (
	"bytes"
	"context"
	"crypto/aes"
	"errors"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/storage/value"
	aestransformer "k8s.io/apiserver/pkg/storage/value/encrypt/aes"
)

const secretKey = "/registry/secrets/default/db"

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		provider string
		size     int
	}{{ProviderAESCBC, 32}, {ProviderAESCBC, 16}, {ProviderAESGCM, 32}, {ProviderAESGCM, 24}, {ProviderAESGCM, 16}} {
		t.Run(tc.provider, func(t *testing.T) {
			tr := mustTransformer(t, testConfig([]string{"secrets"}, tc.provider, Key{Name: "k1", Secret: keyB64(tc.size, 'a')}))
			for _, plain := range [][]byte{nil, []byte("x"), []byte("exactly sixteen!"), bytes.Repeat([]byte("s3cr3t"), 100)} {
				enc, err := tr.encrypt(secretKey, plain)
				if err != nil {
					t.Fatal(err)
				}
				prefix := "k8s:enc:" + tc.provider + ":v1:k1:"
				if !strings.HasPrefix(string(enc), prefix) {
					t.Fatalf("stored value %q lacks prefix %q", enc[:min(len(enc), 40)], prefix)
				}
				if len(plain) >= 8 && bytes.Contains(enc, plain) {
					t.Fatal("ciphertext contains the plaintext")
				}
				got, err := tr.decrypt(secretKey, enc)
				if err != nil || !bytes.Equal(got, plain) {
					t.Fatalf("decrypt = %q, %v; want %q", got, err, plain)
				}
				if !tr.current(secretKey, enc) {
					t.Fatal("fresh value is not current")
				}
			}
		})
	}
}

// TestUpstreamFormat checks that values are exchangeable with
// kube-apiserver's own aes transformers (same bytes after the prefix, the
// storage key as GCM additional data).
func TestUpstreamFormat(t *testing.T) {
	secret := keyB64(32, 'u')
	raw, _ := decodeKey(secret)
	block, err := aes.NewCipher(raw)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := aestransformer.NewGCMTransformer(block)
	if err != nil {
		t.Fatal(err)
	}
	upstream := map[string]value.Transformer{ProviderAESCBC: aestransformer.NewCBCTransformer(block), ProviderAESGCM: gcm}
	ctx := context.Background()
	dataCtx := value.DefaultContext(secretKey)
	for name, up := range upstream {
		t.Run(name, func(t *testing.T) {
			prefix := "k8s:enc:" + name + ":v1:key1:"
			tr := mustTransformer(t, testConfig([]string{"secrets"}, name, Key{Name: "key1", Secret: secret}))
			ours, err := tr.encrypt(secretKey, []byte("from orch"))
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := up.TransformFromStorage(ctx, ours[len(prefix):], dataCtx)
			if err != nil || string(got) != "from orch" {
				t.Fatalf("upstream reads orch's value: %q, %v", got, err)
			}
			theirs, err := up.TransformToStorage(ctx, []byte("from kube-apiserver"), dataCtx)
			if err != nil {
				t.Fatal(err)
			}
			got, err = tr.decrypt(secretKey, append([]byte(prefix), theirs...))
			if err != nil || string(got) != "from kube-apiserver" {
				t.Fatalf("orch reads upstream's value: %q, %v", got, err)
			}
		})
	}
}

func TestWrongKey(t *testing.T) {
	const plain = `{"kind":"Secret","data":{"password":"aHVudGVyMg=="}}`
	for _, p := range []string{ProviderAESCBC, ProviderAESGCM} {
		t.Run(p, func(t *testing.T) {
			a := mustTransformer(t, testConfig([]string{"secrets"}, p, Key{Name: "k", Secret: keyB64(32, 'a')}))
			b := mustTransformer(t, testConfig([]string{"secrets"}, p, Key{Name: "k", Secret: keyB64(32, 'b')}))
			// CBC is not authenticated: a wrong key is caught by the padding
			// check, which random garbage passes with probability ~1/256
			// (the IV is random per write). Every attempt must fail or
			// yield garbage; nearly all must be caught.
			caught := 0
			for i := 0; i < 16; i++ {
				enc, err := a.encrypt(secretKey, []byte(plain))
				if err != nil {
					t.Fatal(err)
				}
				got, err := b.decrypt(secretKey, enc)
				switch {
				case err == nil && string(got) == plain:
					t.Fatalf("decrypt with the wrong key returned the plaintext")
				case err == nil && p == ProviderAESCBC:
					continue
				case !errors.Is(err, ErrDecrypt) || !strings.Contains(err.Error(), secretKey) || !strings.Contains(err.Error(), `key "k"`):
					t.Fatalf("decrypt with the wrong key = %q, %v; want ErrDecrypt naming the storage key and key", got, err)
				}
				caught++
			}
			if caught < 12 {
				t.Fatalf("only %d of 16 wrong-key reads were caught", caught)
			}
		})
	}
}

func TestTampered(t *testing.T) {
	tr := mustTransformer(t, testConfig([]string{"secrets"}, ProviderAESGCM, Key{Name: "k", Secret: keyB64(32, 'a')}))
	enc, err := tr.encrypt(secretKey, []byte("payload"))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(enc)
	flipped[len(flipped)-1] ^= 1
	if _, err := tr.decrypt(secretKey, flipped); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("flipped bit: err = %v, want ErrDecrypt", err)
	}
	if _, err := tr.decrypt("/registry/secrets/default/other", enc); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("value moved to another key: err = %v, want ErrDecrypt (the key is GCM additional data)", err)
	}
	short := enc[:len("k8s:enc:aesgcm:v1:k:")+5]
	if _, err := tr.decrypt(secretKey, short); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("truncated: err = %v, want ErrDecrypt", err)
	}
	cbc := mustTransformer(t, testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "k", Secret: keyB64(32, 'a')}))
	enc, err = cbc.encrypt(secretKey, []byte("payload"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cbc.decrypt(secretKey, enc[:len(enc)-3]); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("CBC truncated: err = %v, want ErrDecrypt", err)
	}
}

func TestPrefixes(t *testing.T) {
	tr := mustTransformer(t, testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "new", Secret: keyB64(32, 'n')}, Key{Name: "old", Secret: keyB64(32, 'o')}))
	old := mustTransformer(t, testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "old", Secret: keyB64(32, 'o')}))
	enc, err := old.encrypt(secretKey, []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tr.decrypt(secretKey, enc); err != nil || string(got) != "v" {
		t.Fatalf("older key: %q, %v", got, err)
	}
	if tr.current(secretKey, enc) {
		t.Fatal("a value under an older key is current")
	}
	if got, err := tr.decrypt(secretKey, []byte(`{"plain":true}`)); err != nil || string(got) != `{"plain":true}` {
		t.Fatalf("plaintext: %q, %v", got, err)
	}
	if tr.current(secretKey, []byte("plain")) {
		t.Fatal("plaintext is current under aescbc")
	}
	for stored, want := range map[string]string{
		"k8s:enc:aescbc:v1:gone:0123456789abcdef0123456789abcdef": `aescbc v1 key "gone"`,
		"k8s:enc:kms:v2:vault:xxxx":                               `kms v2 key "vault"`,
		"k8s:enc:secretbox:v1:k:zz":                               `secretbox v1 key "k"`,
		"k8s:enc:garbage":                                         "an unknown provider",
	} {
		_, err := tr.decrypt(secretKey, []byte(stored))
		if !errors.Is(err, ErrDecrypt) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), secretKey) {
			t.Errorf("decrypt(%q) = %v; want ErrDecrypt naming %s and the key", stored, err, want)
		}
	}
	// Keys outside the configured resources are stored as they are.
	if enc, err := tr.encrypt("/registry/configmaps/default/c", []byte("cm")); err != nil || string(enc) != "cm" {
		t.Fatalf("configmap stored as %q, %v", enc, err)
	}
}

func TestIdentityFirst(t *testing.T) {
	c := testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "k", Secret: keyB64(32, 'k')})
	enc, err := mustTransformer(t, c).encrypt(secretKey, []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Resources[0].Providers
	p[0], p[1] = p[1], p[0]
	tr := mustTransformer(t, c)
	if got, err := tr.encrypt(secretKey, []byte("v")); err != nil || string(got) != "v" {
		t.Fatalf("identity first stores %q, %v", got, err)
	}
	if got, err := tr.decrypt(secretKey, enc); err != nil || string(got) != "v" {
		t.Fatalf("identity first still reads encrypted values: %q, %v", got, err)
	}
	if tr.current(secretKey, enc) || !tr.current(secretKey, []byte("v")) {
		t.Fatal("identity first: encrypted values must be stale and plaintext current")
	}
}

func TestMatcher(t *testing.T) {
	for _, tc := range []struct {
		resource, key string
		want          bool
	}{
		{"secrets", "/registry/secrets/ns/a", true},
		{"secrets", "/registry/secretsx/ns/a", false},
		{"configmaps", "/registry/secrets/ns/a", false},
		{"deployments.apps", "/registry/apps/deployments/ns/d", true},
		{"deployments.apps", "/registry/deployments/ns/d", false},
		{"widgets.example.com", "/registry/example.com/widgets/ns/w", true},
		{"*.apps", "/registry/apps/statefulsets/ns/s", true},
		{"*.apps", "/registry/batch/jobs/ns/j", false},
		{"*.", "/registry/configmaps/ns/c", true},
		{"*.", "/registry/apps/deployments/ns/d", false},
		{"*.", "/registry/example.com/widgets/ns/w", false},
		{"*.*", "/registry/example.com/widgets/ns/w", true},
		{"*.*", "/registry/nodes/n1", true},
	} {
		if got := newMatcher(tc.resource).match(tc.key); got != tc.want {
			t.Errorf("%s matches %s = %v, want %v", tc.resource, tc.key, got, tc.want)
		}
	}
}
