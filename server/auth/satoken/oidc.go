package satoken

import (
	"crypto/ecdh"
	"encoding/json"
	"fmt"
)

// OIDCConfigPath and JWKSPath are the ServiceAccount issuer discovery
// documents kube-apiserver serves.
const (
	OIDCConfigPath = "/.well-known/openid-configuration"
	JWKSPath       = "/openid/v1/jwks"
)

type jwk struct {
	Use string `json:"use"`
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Crv string `json:"crv"`
	Alg string `json:"alg"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// OIDCDocuments returns the OpenID provider configuration and the JSON Web
// Key Set of the issuer, so other systems can verify its tokens.
func (i *Issuer) OIDCDocuments() (config, jwks []byte, err error) {
	config, err = json.Marshal(map[string]any{
		"issuer":                                i.issuer,
		"jwks_uri":                              i.issuer + JWKSPath,
		"response_types_supported":              []string{"id_token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"ES256"},
	})
	if err != nil {
		return nil, nil, err
	}
	pub, err := i.key.PublicKey.ECDH()
	if err != nil {
		return nil, nil, fmt.Errorf("public key: %w", err)
	}
	raw := pub.Bytes() // 0x04 || X || Y
	if pub.Curve() != ecdh.P256() || len(raw) != 65 {
		return nil, nil, fmt.Errorf("unexpected public key encoding")
	}
	jwks, err = json.Marshal(map[string]any{"keys": []jwk{{Use: "sig", Kty: "EC", Kid: i.kid, Crv: "P-256", Alg: "ES256",
		X: b64.EncodeToString(raw[1:33]), Y: b64.EncodeToString(raw[33:])}}})
	return config, jwks, err
}
