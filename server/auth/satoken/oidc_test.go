package satoken

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/json"
	"math/big"
	"testing"
	"time"
)

// TestJWKSVerifiesTokens rebuilds the public key from the published JWKS
// and verifies an issued token with it, as an outside OIDC client would.
func TestJWKSVerifiesTokens(t *testing.T) {
	key := newKey(t)
	iss, err := NewIssuer(key, "https://kubernetes.default.svc.cluster.local", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, jwks, err := iss.OIDCDocuments()
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil || c.Issuer != iss.IssuerURL() || c.JWKSURI != iss.IssuerURL()+JWKSPath {
		t.Fatalf("config %s (%v)", cfg, err)
	}
	var set struct{ Keys []jwk }
	if err := json.Unmarshal(jwks, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("jwks %s (%v)", jwks, err)
	}
	x, _ := b64.DecodeString(set.Keys[0].X)
	y, _ := b64.DecodeString(set.Keys[0].Y)
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	tok, _, err := iss.Issue(Request{Namespace: "ns", ServiceAccount: Ref{Name: "sa"}, Expiration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var claims Claims
	if err := parse(tok, pub, &claims); err != nil {
		t.Fatalf("token does not verify with the published key: %v", err)
	}
	if kid, _ := KeyID(pub); kid != set.Keys[0].Kid {
		t.Fatalf("kid %q, want %q", set.Keys[0].Kid, kid)
	}
}
