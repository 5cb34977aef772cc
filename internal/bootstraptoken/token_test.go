package bootstraptoken

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGenerateParse(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		tok, err := Generate()
		if err != nil {
			t.Fatal(err)
		}
		if !IsToken(tok.String()) || seen[tok.ID] {
			t.Fatalf("bad or repeated token %q", tok.ID)
		}
		seen[tok.ID] = true
		back, err := Parse(tok.String())
		if err != nil || back != tok {
			t.Fatalf("Parse(%q) = %v, %v", tok.ID, back.ID, err)
		}
	}
	for _, bad := range []string{"", "abcdef", "abcdef.0123456789abcde", "ABCDEF.0123456789abcdef", "abcdef:0123456789abcdef",
		"abcdef.0123456789abcdef.", "abcde.0123456789abcdefg"} {
		if _, err := Parse(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestParseID(t *testing.T) {
	for in, want := range map[string]string{"abcdef": "abcdef", "abcdef.0123456789abcdef": "abcdef"} {
		if got, err := ParseID(in); err != nil || got != want {
			t.Errorf("ParseID(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"abc", "ABCDEF", "abcdef.x", "../../x"} {
		if _, err := ParseID(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseID(%q) = %v", bad, err)
		}
	}
}

func TestNewSecretAndInfo(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tok := Token{ID: "abcdef", Secret: "0123456789abcdef"}
	s, err := NewSecret(tok, Spec{Description: "for the pis", TTL: 2 * time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "bootstrap-token-abcdef" || s.Namespace != "kube-system" || s.Type != "bootstrap.kubernetes.io/token" {
		t.Fatalf("meta %s/%s %s", s.Namespace, s.Name, s.Type)
	}
	want := map[string]string{"token-id": "abcdef", "token-secret": "0123456789abcdef", "description": "for the pis",
		"expiration": "2026-01-02T05:04:05Z", "usage-bootstrap-signing": "true", "usage-bootstrap-authentication": "true",
		"auth-extra-groups": "system:bootstrappers:orch:default-node-token"}
	if len(s.Data) != len(want) {
		t.Fatalf("data keys %d, want %d", len(s.Data), len(want))
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("%s = %q, want %q", k, s.Data[k], v)
		}
	}
	in := InfoOf(s)
	if in.ID != "abcdef" || !in.Expires.Equal(now.Add(2*time.Hour)) || strings.Join(in.Usages, ",") != "authentication,signing" ||
		in.Description != "for the pis" || len(in.Groups) != 1 {
		t.Fatalf("info %+v", in)
	}
	if !IsTokenSecret(s) {
		t.Fatal("IsTokenSecret = false")
	}
	forever, err := NewSecret(tok, Spec{Usages: []string{"signing"}, Groups: []string{}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := forever.Data["expiration"]; ok || InfoOf(forever).Expires != (time.Time{}) {
		t.Fatal("ttl 0 must not expire")
	}
	for _, spec := range []Spec{{TTL: -time.Second}, {Usages: []string{"pwn"}}, {Groups: []string{"system:masters"}}} {
		if _, err := NewSecret(tok, spec, now); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewSecret(%+v) = %v, want ErrInvalid", spec, err)
		}
	}
}

// TestCheck: the join decision for each way a token can be wrong.
func TestCheck(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tok := Token{ID: "abcdef", Secret: "0123456789abcdef"}
	good, _ := NewSecret(tok, Spec{TTL: time.Hour}, now)
	if err := Check(good, tok, now); err != nil {
		t.Fatalf("good token: %v", err)
	}
	if err := Check(good, tok, now.Add(time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("at expiry: %v", err)
	}
	wrong := tok
	wrong.Secret = "0123456789abcdee"
	if err := Check(good, wrong, now); !errors.Is(err, ErrWrongSecret) || strings.Contains(err.Error(), wrong.Secret) {
		t.Errorf("wrong secret: %v", err)
	}
	noAuth, _ := NewSecret(tok, Spec{Usages: []string{"signing"}}, now)
	if err := Check(noAuth, tok, now); !errors.Is(err, ErrUnusable) {
		t.Errorf("signing only: %v", err)
	}
	deleting := good.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	if err := Check(deleting, tok, now); !errors.Is(err, ErrUnusable) {
		t.Errorf("being deleted: %v", err)
	}
	opaque := good.DeepCopy()
	opaque.Type = "Opaque"
	if err := Check(opaque, tok, now); !errors.Is(err, ErrUnusable) {
		t.Errorf("opaque: %v", err)
	}
	garbled := good.DeepCopy()
	garbled.Data["expiration"] = []byte("tomorrow")
	if err := Check(garbled, tok, now); !errors.Is(err, ErrExpired) {
		t.Errorf("unparseable expiration: %v", err)
	}
	if left, exp := Expiration(good, now.Add(30*time.Minute)); exp || left != 30*time.Minute {
		t.Errorf("Expiration = %v %v", left, exp)
	}
}
