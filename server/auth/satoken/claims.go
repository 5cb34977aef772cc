package satoken

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Audiences is the "aud" claim: a string or a list of strings in JSON.
type Audiences []string

// UnmarshalJSON accepts both forms RFC 7519 allows.
func (a *Audiences) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = Audiences{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("aud: %w", err)
	}
	*a = many
	return nil
}

// Ref names an object a token is bound to.
type Ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// Private is the "kubernetes.io" claim.
type Private struct {
	Namespace      string `json:"namespace"`
	ServiceAccount Ref    `json:"serviceaccount"`
	Pod            *Ref   `json:"pod,omitempty"`
	Secret         *Ref   `json:"secret,omitempty"`
	Node           *Ref   `json:"node,omitempty"`
	WarnAfter      *int64 `json:"warnafter,omitempty"`
}

// Claims are the claims of a bound ServiceAccount token.
type Claims struct {
	Issuer    string    `json:"iss"`
	Subject   string    `json:"sub"`
	Audience  Audiences `json:"aud"`
	Expiry    int64     `json:"exp"`
	IssuedAt  int64     `json:"iat"`
	NotBefore int64     `json:"nbf"`
	ID        string    `json:"jti,omitempty"`
	K8s       *Private  `json:"kubernetes.io,omitempty"`
}

// UserName is the user a ServiceAccount authenticates as.
func UserName(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// Groups are the groups of a ServiceAccount user.
func Groups(namespace string) []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
}

// audienceMatches reports whether any token audience is one of want.
func audienceMatches(got Audiences, want []string) bool {
	for _, a := range got {
		if slices.Contains(want, a) {
			return true
		}
	}
	return false
}
