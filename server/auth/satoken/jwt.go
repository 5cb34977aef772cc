package satoken

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// ErrMalformed is wrapped by errors about a token that is not a JWS we can read.
var ErrMalformed = errors.New("malformed token")

// ErrSignature is wrapped when the signature does not verify.
var ErrSignature = errors.New("invalid token signature")

type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid,omitempty"`
}

var b64 = base64.RawURLEncoding

// KeyID is upstream's key id: the base64url SHA-256 of the public key's
// PKIX DER encoding.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("marshal public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return b64.EncodeToString(sum[:]), nil
}

// sign returns the compact ES256 JWS of claims.
func sign(key *ecdsa.PrivateKey, kid string, claims any) (string, error) {
	h, err := json.Marshal(header{Alg: "ES256", Kid: kid})
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("marshal claims: %w", err)
	}
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64.EncodeToString(sig), nil
}

// looksLikeJWT tells whether tok has the three dot-separated parts of a JWS.
func looksLikeJWT(tok string) bool {
	return strings.Count(tok, ".") == 2
}

// parse checks the JWS of tok against pub and decodes its payload into claims.
func parse(tok string, pub *ecdsa.PublicKey, claims any) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%w: want 3 parts, got %d", ErrMalformed, len(parts))
	}
	hb, err := b64.DecodeString(parts[0])
	if err != nil {
		return fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	var h header
	if err := json.Unmarshal(hb, &h); err != nil {
		return fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	if h.Alg != "ES256" {
		return fmt.Errorf("%w: algorithm %q is not ES256", ErrSignature, h.Alg)
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return fmt.Errorf("%w: signature encoding", ErrSignature)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, sum[:], r, s) {
		return ErrSignature
	}
	pb, err := b64.DecodeString(parts[1])
	if err != nil {
		return fmt.Errorf("%w: payload: %v", ErrMalformed, err)
	}
	if err := json.Unmarshal(pb, claims); err != nil {
		return fmt.Errorf("%w: payload: %v", ErrMalformed, err)
	}
	return nil
}

// peekIssuer returns the unverified "iss" claim of tok ("" when unreadable).
func peekIssuer(tok string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return ""
	}
	pb, err := b64.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(pb, &c) != nil {
		return ""
	}
	return c.Iss
}
