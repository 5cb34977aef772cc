package pki

import (
	"os"
	"path/filepath"
	"testing"
)

func TestServiceAccountKeyPersists(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	k1, err := LoadOrCreateServiceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, ServiceAccountKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %v, want 0600", st.Mode().Perm())
	}
	k2, err := LoadOrCreateServiceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !k1.Equal(k2) {
		t.Fatal("second start made a new key")
	}
	if err := os.WriteFile(filepath.Join(dir, ServiceAccountKeyFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateServiceAccountKey(dir); err == nil {
		t.Fatal("a corrupt key was accepted")
	}
}
