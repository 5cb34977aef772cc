package bootstraptoken

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of `orch token create`, as `k3s token create` (kubeadm's with
// the group renamed).
const (
	DefaultTTL   = 24 * time.Hour
	DefaultGroup = "system:bootstrappers:orch:default-node-token"
)

// DefaultUsages are the usages of a new token unless told otherwise.
var DefaultUsages = []string{"signing", "authentication"}

// Errors of Check.
var (
	// ErrExpired means the token's expiration has passed.
	ErrExpired = errors.New("bootstrap token has expired")
	// ErrWrongSecret means the token's secret does not match its Secret.
	ErrWrongSecret = errors.New("bootstrap token secret is wrong")
	// ErrUnusable means the Secret is not a bootstrap token that may
	// authenticate (wrong type or ID, no authentication usage, deleted).
	ErrUnusable = errors.New("bootstrap token cannot be used to join")
)

// Spec is what `orch token create` asks for.
type Spec struct {
	Description string
	TTL         time.Duration // 0 = never expires
	Usages      []string      // nil = DefaultUsages
	Groups      []string      // nil = DefaultGroup
}

// NewSecret builds the Secret that stores tok with spec, created at now.
func NewSecret(tok Token, spec Spec, now time.Time) (*corev1.Secret, error) {
	if _, err := Parse(tok.String()); err != nil {
		return nil, err
	}
	if spec.TTL < 0 {
		return nil, fmt.Errorf("%w: ttl %v is negative (0 = never expires)", ErrInvalid, spec.TTL)
	}
	usages, groups := spec.Usages, spec.Groups
	if usages == nil {
		usages = DefaultUsages
	}
	if groups == nil {
		groups = []string{DefaultGroup}
	}
	if err := ValidateUsages(usages); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := ValidateGroup(g); err != nil {
			return nil, err
		}
	}
	data := map[string][]byte{IDKey: []byte(tok.ID), SecretKey: []byte(tok.Secret)}
	if spec.Description != "" {
		data[DescriptionKey] = []byte(spec.Description)
	}
	if spec.TTL > 0 {
		data[ExpirationKey] = []byte(now.Add(spec.TTL).UTC().Format(time.RFC3339))
	}
	for _, u := range usages {
		data[UsagePrefix+u] = []byte("true")
	}
	if len(groups) > 0 {
		data[GroupsKey] = []byte(strings.Join(groups, ","))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: tok.SecretName(), Namespace: Namespace},
		Type:       corev1.SecretType(SecretType),
		Data:       data,
	}, nil
}

// Info is what `orch token list` shows of a token (never its secret).
type Info struct {
	ID          string
	Expires     time.Time // zero = never
	Usages      []string
	Description string
	Groups      []string
}

// IsTokenSecret reports whether s is a bootstrap token Secret in kube-system.
func IsTokenSecret(s *corev1.Secret) bool {
	return s.Namespace == Namespace && string(s.Type) == SecretType && strings.HasPrefix(s.Name, SecretPrefix)
}

// InfoOf reads a token Secret. An unparseable expiration reads as already
// expired (upstream's rule).
func InfoOf(s *corev1.Secret) Info {
	in := Info{ID: string(s.Data[IDKey]), Description: string(s.Data[DescriptionKey])}
	if in.ID == "" {
		in.ID = strings.TrimPrefix(s.Name, SecretPrefix)
	}
	if e := s.Data[ExpirationKey]; len(e) > 0 {
		t, err := time.Parse(time.RFC3339, string(e))
		if err != nil {
			t = time.Unix(0, 0).UTC()
		}
		in.Expires = t
	}
	for k, v := range s.Data {
		if u, ok := strings.CutPrefix(k, UsagePrefix); ok && string(v) == "true" {
			in.Usages = append(in.Usages, u)
		}
	}
	sort.Strings(in.Usages)
	if g := string(s.Data[GroupsKey]); g != "" {
		in.Groups = strings.Split(g, ",")
	}
	return in
}

// Expiration is upstream's GetExpiration: how long the token in s has left
// and whether it has expired at now. No expiration key = never expires; an
// unparseable one = expired.
func Expiration(s *corev1.Secret, now time.Time) (left time.Duration, expired bool) {
	e := s.Data[ExpirationKey]
	if len(e) == 0 {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, string(e))
	if err != nil {
		return 0, true
	}
	if left = t.Sub(now); left <= 0 {
		return 0, true
	}
	return left, false
}

// Check decides whether tok, whose Secret is s, may join a node at now, as
// kube-apiserver's bootstrap token authenticator decides whether it may
// authenticate. The secret is compared in constant time; errors never hold
// it.
func Check(s *corev1.Secret, tok Token, now time.Time) error {
	if string(s.Type) != SecretType || s.Namespace != Namespace || s.Name != tok.SecretName() {
		return fmt.Errorf("%w: %s/%s is not a bootstrap token Secret", ErrUnusable, s.Namespace, s.Name)
	}
	if s.DeletionTimestamp != nil {
		return fmt.Errorf("%w: token %s is being deleted", ErrUnusable, tok.ID)
	}
	if string(s.Data[IDKey]) != tok.ID {
		return fmt.Errorf("%w: the Secret of token %s holds another token-id", ErrUnusable, tok.ID)
	}
	if subtle.ConstantTimeCompare(s.Data[SecretKey], []byte(tok.Secret)) != 1 {
		return fmt.Errorf("%w (token %s)", ErrWrongSecret, tok.ID)
	}
	if _, expired := Expiration(s, now); expired {
		return fmt.Errorf("%w: token %s expired at %s; create a new one with `orch token create`", ErrExpired, tok.ID, s.Data[ExpirationKey])
	}
	if string(s.Data[AuthenticationUsage]) != "true" {
		return fmt.Errorf("%w: token %s lacks the usage \"authentication\"", ErrUnusable, tok.ID)
	}
	return nil
}
