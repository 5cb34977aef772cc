package pki

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteAgentToken(t *testing.T) {
	caPEM := []byte("ca pem")
	hash := CAHash(caPEM)
	path := filepath.Join(t.TempDir(), "server", "agent-token")
	tok, err := WriteAgentToken(path, caPEM, "agent-secret", "server-secret", nil)
	if err != nil || tok != FormatAgentToken(hash, "agent-secret") {
		t.Fatalf("got %q, %v", tok, err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if strings.TrimSpace(string(b)) != tok || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file %q mode %v", b, fi.Mode())
	}
	if again, err := WriteAgentToken(path, caPEM, tok, "server-secret", nil); err != nil || again != tok {
		t.Fatalf("full form: %q %v", again, err)
	}
	if _, err := WriteAgentToken(path, caPEM, "same", "same", nil); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("agent token = server token: %v", err)
	}
	other := FormatAgentToken(CAHash([]byte("other")), "x")
	if _, err := WriteAgentToken(path, caPEM, other, "server-secret", nil); !errors.Is(err, ErrTokenCAMismatch) {
		t.Fatalf("foreign CA: %v", err)
	}
	if tok, err := WriteAgentToken(path, caPEM, "", "server-secret", nil); err != nil || tok != "" {
		t.Fatalf("none: %q %v", tok, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old agent token left behind: %v", err)
	}
}
