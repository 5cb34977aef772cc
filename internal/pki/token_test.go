package pki

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
)

func TestParseToken(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	tests := []struct {
		name, in           string
		wantHash, wantSecr string
		wantErr            bool
	}{
		{"full", "K10" + hash + "::server:s3cr3t", hash, "s3cr3t", false},
		{"full with newline", "K10" + hash + "::server:s3cr3t\n", hash, "s3cr3t", false},
		{"secret with colons", "K10" + hash + "::server:a:b", hash, "a:b", false},
		{"bare secret", "mysecret", "", "mysecret", false},
		{"empty", "", "", "", true},
		{"blank", "  \n", "", "", true},
		{"bare with space", "my secret", "", "", true},
		{"no separator", "K10" + hash + "server:x", "", "", true},
		{"short hash", "K10abc::server:x", "", "", true},
		{"upper-case hash", "K10" + strings.ToUpper(hash) + "::server:x", "", "", true},
		{"non-hex hash", "K10" + strings.Repeat("zz", 32) + "::server:x", "", "", true},
		{"agent token", "K10" + hash + "::node:x", hash, "x", false},
		{"bootstrap token", "K10" + hash + "::abcdef.0123456789abcdef", hash, "abcdef.0123456789abcdef", false},
		{"bare bootstrap token", "abcdef.0123456789abcdef", "", "abcdef.0123456789abcdef", false},
		{"malformed bootstrap token", "K10" + hash + "::abcdef.0123", "", "", true},
		{"wrong user", "K10" + hash + "::admin:x", "", "", true},
		{"no user", "K10" + hash + "::x", "", "", true},
		{"empty secret", "K10" + hash + "::server:", "", "", true},
		{"control char", "K10" + hash + "::server:a\tb", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, s, err := ParseToken(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidToken) {
					t.Fatalf("err = %v, want ErrInvalidToken", err)
				}
				return
			}
			if err != nil || h != tt.wantHash || s != tt.wantSecr {
				t.Fatalf("got %q %q %v", h, s, err)
			}
		})
	}
}

func TestCAHashAndFormatRoundTrip(t *testing.T) {
	h := CAHash([]byte("pem"))
	if len(h) != 64 {
		t.Fatalf("hash %q", h)
	}
	gh, gs, err := ParseToken(FormatToken(h, "x"))
	if err != nil || gh != h || gs != "x" {
		t.Fatalf("round trip: %q %q %v", gh, gs, err)
	}
	if gh, gs, err := ParseToken(FormatAgentToken(h, "y")); err != nil || gh != h || gs != "y" {
		t.Fatalf("agent round trip: %q %q %v", gh, gs, err)
	}
	if gh, gs, err := ParseToken(FormatBootstrapToken(h, "abcdef.0123456789abcdef")); err != nil || gh != h || gs != "abcdef.0123456789abcdef" {
		t.Fatalf("bootstrap round trip: %q %q %v", gh, gs, err)
	}
	if !SecretsEqual("a", "a") || SecretsEqual("a", "b") || SecretsEqual("a", "ab") {
		t.Fatal("SecretsEqual")
	}
}

func TestLoadOrCreateToken(t *testing.T) {
	log := zaptest.NewLogger(t)
	caPEM, otherPEM := []byte("ca"), []byte("other")
	path := filepath.Join(t.TempDir(), "server", "token")

	first, err := LoadOrCreateToken(path, caPEM, "", log)
	if err != nil {
		t.Fatal(err)
	}
	h, s, err := ParseToken(first)
	if err != nil || h != CAHash(caPEM) || len(s) < 32 {
		t.Fatalf("generated token %q: %v", first, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	again, err := LoadOrCreateToken(path, caPEM, "", log)
	if err != nil || again != first {
		t.Fatalf("token not reused: %q %v", again, err)
	}

	given, err := LoadOrCreateToken(path, caPEM, "chosen", log)
	if err != nil || given != FormatToken(CAHash(caPEM), "chosen") {
		t.Fatalf("given bare token: %q %v", given, err)
	}
	full, err := LoadOrCreateToken(path, caPEM, FormatToken(CAHash(caPEM), "full"), log)
	if err != nil || full != FormatToken(CAHash(caPEM), "full") {
		t.Fatalf("given full token: %q %v", full, err)
	}
	if _, err := LoadOrCreateToken(path, caPEM, FormatToken(CAHash(otherPEM), "x"), log); !errors.Is(err, ErrTokenCAMismatch) {
		t.Fatalf("foreign CA hash: %v", err)
	}
	if _, err := LoadOrCreateToken(path, caPEM, "bad token", log); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("bad token: %v", err)
	}
	b, _ := os.ReadFile(path)
	if strings.TrimSpace(string(b)) != full {
		t.Fatalf("file changed by a rejected token: %q", b)
	}
}
