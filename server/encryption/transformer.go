package encryption

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
)

// EncryptedPrefix starts every encrypted value (upstream's "k8s:enc:").
const EncryptedPrefix = "k8s:enc:"

// ErrDecrypt is wrapped by every error reading an encrypted value.
var ErrDecrypt = errors.New("cannot decrypt stored value")

// aesKey is one configured key of an aescbc or aesgcm provider.
type aesKey struct {
	provider string
	name     string
	prefix   []byte // k8s:enc:<provider>:v1:<name>:
	block    cipher.Block
	aead     cipher.AEAD // aesgcm only
}

// provider is one configured provider; identity has no keys.
type provider struct {
	name string
	keys []*aesKey
}

// rule is one resources entry of the config.
type rule struct {
	matchers  []matcher
	providers []provider
}

// transformer is a loaded Config: it encrypts with the first provider of the
// rule a key falls under and decrypts with any configured key.
type transformer struct {
	rules []rule
	keys  []*aesKey // every key, in config order, for decryption by prefix
}

// newTransformer builds the ciphers of a validated config.
func newTransformer(c *Config) (*transformer, error) {
	t := &transformer{}
	for _, rc := range c.Resources {
		r := rule{}
		for _, name := range rc.Resources {
			r.matchers = append(r.matchers, newMatcher(name))
		}
		for _, pc := range rc.Providers {
			p, err := t.provider(pc)
			if err != nil {
				return nil, err
			}
			r.providers = append(r.providers, p)
		}
		t.rules = append(t.rules, r)
	}
	return t, nil
}

func (t *transformer) provider(pc ProviderConfig) (provider, error) {
	p := provider{name: pc.name()}
	if pc.Identity != nil {
		return p, nil
	}
	for _, k := range pc.aes().Keys {
		ak, err := newAESKey(p.name, k)
		if err != nil {
			return provider{}, err
		}
		p.keys = append(p.keys, ak)
		t.keys = append(t.keys, ak)
	}
	return p, nil
}

func newAESKey(providerName string, k Key) (*aesKey, error) {
	raw, err := decodeKey(k.Secret)
	if err != nil {
		return nil, fmt.Errorf("%w: %s key %q: %w", ErrInvalidConfig, providerName, k.Name, err)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("%s key %q: %w", providerName, k.Name, err)
	}
	ak := &aesKey{provider: providerName, name: k.Name, block: block,
		prefix: []byte(EncryptedPrefix + providerName + ":v1:" + k.Name + ":")}
	if providerName == ProviderAESGCM {
		if ak.aead, err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("%s key %q: %w", providerName, k.Name, err)
		}
	}
	return ak, nil
}

// ruleFor returns the first rule whose resources include key (nil: none).
func (t *transformer) ruleFor(key string) *rule {
	for i := range t.rules {
		for _, m := range t.rules[i].matchers {
			if m.match(key) {
				return &t.rules[i]
			}
		}
	}
	return nil
}

// writeKey is the key that encrypts values of key (nil: stored as plaintext).
func (t *transformer) writeKey(key string) *aesKey {
	r := t.ruleFor(key)
	if r == nil || len(r.providers[0].keys) == 0 {
		return nil
	}
	return r.providers[0].keys[0]
}

// encrypt returns what is stored for value under key.
func (t *transformer) encrypt(key string, value []byte) ([]byte, error) {
	k := t.writeKey(key)
	if k == nil {
		return value, nil
	}
	return k.seal(key, value)
}

// decrypt returns the plaintext of the stored value of key.
func (t *transformer) decrypt(key string, stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, []byte(EncryptedPrefix)) {
		return stored, nil
	}
	var errs []error
	for _, k := range t.keys {
		if !bytes.HasPrefix(stored, k.prefix) {
			continue
		}
		plain, err := k.open(key, stored[len(k.prefix):])
		if err == nil {
			return plain, nil
		}
		errs = append(errs, fmt.Errorf("key %q: %w", k.name, err))
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("%w of %q: it is encrypted with %s, which is not a configured provider and key", ErrDecrypt, key, describePrefix(stored))
	}
	return nil, fmt.Errorf("%w of %q: %w", ErrDecrypt, key, errors.Join(errs...))
}

// current reports whether stored is already what encrypt would write for
// key (same provider and key, or plaintext under identity).
func (t *transformer) current(key string, stored []byte) bool {
	k := t.writeKey(key)
	if k == nil {
		return !bytes.HasPrefix(stored, []byte(EncryptedPrefix))
	}
	return bytes.HasPrefix(stored, k.prefix)
}

// describePrefix names the provider and key of an encrypted value for an
// error message: "aescbc key \"name\"" (never any ciphertext).
func describePrefix(stored []byte) string {
	rest := string(stored[len(EncryptedPrefix):min(len(stored), len(EncryptedPrefix)+256)])
	parts := strings.SplitN(rest, ":", 4)
	if len(parts) < 4 {
		return "an unknown provider"
	}
	return fmt.Sprintf("%s %s key %q", parts[0], parts[1], parts[2])
}

// seal encrypts value in upstream's format: IV + CBC/PKCS#7 ciphertext, or
// nonce + GCM ciphertext with the storage key as additional data.
func (k *aesKey) seal(key string, value []byte) ([]byte, error) {
	if k.aead != nil {
		ns := k.aead.NonceSize()
		out := make([]byte, len(k.prefix)+ns, len(k.prefix)+ns+len(value)+k.aead.Overhead())
		copy(out, k.prefix)
		nonce := out[len(k.prefix):]
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("AES-GCM nonce: %w", err)
		}
		return k.aead.Seal(out, nonce, value, []byte(key)), nil
	}
	bs := aes.BlockSize
	pad := bs - len(value)%bs
	out := make([]byte, len(k.prefix)+bs+len(value)+pad)
	copy(out, k.prefix)
	body := out[len(k.prefix):]
	if _, err := rand.Read(body[:bs]); err != nil {
		return nil, fmt.Errorf("AES-CBC IV: %w", err)
	}
	copy(body[bs:], value)
	copy(body[bs+len(value):], bytes.Repeat([]byte{byte(pad)}, pad))
	cipher.NewCBCEncrypter(k.block, body[:bs]).CryptBlocks(body[bs:], body[bs:])
	return out, nil
}

// open decrypts data (the value without k.prefix).
func (k *aesKey) open(key string, data []byte) ([]byte, error) {
	if k.aead != nil {
		ns := k.aead.NonceSize()
		if len(data) < ns {
			return nil, errors.New("the stored data was shorter than the required size")
		}
		plain, err := k.aead.Open(nil, data[:ns], data[ns:], []byte(key))
		if err != nil {
			return nil, fmt.Errorf("AES-GCM authentication failed (wrong key, or the value was changed or moved): %w", err)
		}
		return plain, nil
	}
	return openCBC(k.block, data)
}

func openCBC(block cipher.Block, data []byte) ([]byte, error) {
	bs := aes.BlockSize
	if len(data) < 2*bs {
		return nil, errors.New("the stored data was shorter than the required size")
	}
	if len(data)%bs != 0 {
		return nil, errors.New("the stored data is not a multiple of the block size")
	}
	out := make([]byte, len(data)-bs)
	cipher.NewCBCDecrypter(block, data[:bs]).CryptBlocks(out, data[bs:])
	pad := int(out[len(out)-1])
	if pad == 0 || pad > bs || pad > len(out) {
		return nil, errors.New("invalid PKCS7 data (empty or not padded): wrong key or changed value")
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errors.New("invalid padding on input: wrong key or changed value")
		}
	}
	return out[:len(out)-pad], nil
}
