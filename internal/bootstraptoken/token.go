package bootstraptoken

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// The Secret's names, type and keys, as k8s.io/cluster-bootstrap/token/api.
const (
	Namespace    = "kube-system"
	SecretPrefix = "bootstrap-token-"
	SecretType   = "bootstrap.kubernetes.io/token"

	IDKey          = "token-id"
	SecretKey      = "token-secret"
	ExpirationKey  = "expiration"
	DescriptionKey = "description"
	GroupsKey      = "auth-extra-groups"
	UsagePrefix    = "usage-bootstrap-"
	// AuthenticationUsage must be "true" for a token to join a node.
	AuthenticationUsage = UsagePrefix + "authentication"

	idLen     = 6
	secretLen = 16
	alphabet  = "0123456789abcdefghijklmnopqrstuvwxyz"
)

// KnownUsages are the usages a token may have (upstream's KnownTokenUsages).
var KnownUsages = []string{"signing", "authentication"}

var (
	tokenRE = regexp.MustCompile(`\A([a-z0-9]{6})\.([a-z0-9]{16})\z`)
	idRE    = regexp.MustCompile(`\A[a-z0-9]{6}\z`)
	groupRE = regexp.MustCompile(`\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z`)
)

// ErrInvalid means a token, ID, usage or group is malformed.
var ErrInvalid = errors.New("invalid bootstrap token")

// Token is a bootstrap token: a public ID and a secret.
type Token struct {
	ID     string
	Secret string
}

// String is the token as presented: "<id>.<secret>". It holds the secret:
// never log it.
func (t Token) String() string { return t.ID + "." + t.Secret }

// SecretName is the name of the token's Secret in kube-system.
func (t Token) SecretName() string { return SecretName(t.ID) }

// SecretName is the name of the Secret of the token with this ID.
func SecretName(id string) string { return SecretPrefix + id }

// Generate makes a random token (crypto/rand, uniform over [a-z0-9]).
func Generate() (Token, error) {
	id, err := randomString(idLen)
	if err != nil {
		return Token{}, err
	}
	secret, err := randomString(secretLen)
	if err != nil {
		return Token{}, err
	}
	return Token{ID: id, Secret: secret}, nil
}

func randomString(n int) (string, error) {
	var b strings.Builder
	max := big.NewInt(int64(len(alphabet)))
	for range n {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("generating a bootstrap token: %w", err)
		}
		b.WriteByte(alphabet[v.Int64()])
	}
	return b.String(), nil
}

// Parse checks s against "[a-z0-9]{6}.[a-z0-9]{16}". Its errors never hold
// the secret.
func Parse(s string) (Token, error) {
	m := tokenRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Token{}, fmt.Errorf("%w: want <6 characters [a-z0-9]>.<16 characters [a-z0-9]>", ErrInvalid)
	}
	return Token{ID: m[1], Secret: m[2]}, nil
}

// IsToken reports whether s has the form of a bootstrap token.
func IsToken(s string) bool { return tokenRE.MatchString(s) }

// ParseID checks a token ID (or accepts a whole token and returns its ID),
// as `kubeadm token delete` does.
func ParseID(s string) (string, error) {
	if t, err := Parse(s); err == nil {
		return t.ID, nil
	}
	if !idRE.MatchString(s) {
		return "", fmt.Errorf("%w: token ID %q must be 6 characters [a-z0-9]", ErrInvalid, s)
	}
	return s, nil
}

// ValidateUsages refuses usages other than KnownUsages.
func ValidateUsages(usages []string) error {
	for _, u := range usages {
		if u != KnownUsages[0] && u != KnownUsages[1] {
			return fmt.Errorf("%w: usage %q (valid: %s)", ErrInvalid, u, strings.Join(KnownUsages, ","))
		}
	}
	return nil
}

// ValidateGroup checks an extra group (system:bootstrappers:...).
func ValidateGroup(g string) error {
	if !groupRE.MatchString(g) {
		return fmt.Errorf("%w: group %q must match %s", ErrInvalid, g, groupRE.String())
	}
	return nil
}
