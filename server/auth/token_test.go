package auth

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTokenFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTokenAuthenticator(t *testing.T) {
	path := writeTokenFile(t, "# comment\nt0ken1,alice,uid-1,\"devs,ops\"\nt0ken2,bob,uid-2\n")
	a, err := NewTokenAuthenticator(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, header string
		wantOK       bool
		wantErr      bool
		wantUser     User
	}{
		{name: "no header"},
		{name: "basic auth is not ours", header: "Basic YWxpY2U6cHc="},
		{name: "alice", header: "Bearer t0ken1", wantOK: true,
			wantUser: User{Name: "alice", UID: "uid-1", Groups: []string{"devs", "ops", GroupAuthenticated}}},
		{name: "lower-case scheme", header: "bearer t0ken2", wantOK: true,
			wantUser: User{Name: "bob", UID: "uid-2", Groups: []string{GroupAuthenticated}}},
		{name: "unknown token", header: "Bearer nope", wantErr: true},
		{name: "prefix of a token", header: "Bearer t0ken", wantErr: true},
		{name: "empty token", header: "Bearer ", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "https://x/api", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			u, ok, err := a.AuthenticateRequest(r)
			if tt.wantErr != (err != nil) || ok != tt.wantOK {
				t.Fatalf("ok=%v err=%v", ok, err)
			}
			if err != nil && (!errors.Is(err, ErrInvalidCredentials) || strings.Contains(err.Error(), "nope")) {
				t.Fatalf("error %q: must wrap ErrInvalidCredentials and not echo the token", err)
			}
			if ok && (u.Name != tt.wantUser.Name || u.UID != tt.wantUser.UID || !slices.Equal(u.Groups, tt.wantUser.Groups)) {
				t.Fatalf("user %+v, want %+v", u, tt.wantUser)
			}
		})
	}
}

func TestTokenFileParsing(t *testing.T) {
	tests := []struct {
		name, content string
		wantErr       bool
		wantN         int
	}{
		{"empty", "", false, 0},
		{"three columns", "a,b,c\n", false, 1},
		{"two columns", "a,b\n", true, 0},
		{"empty token", ",b,c\n", true, 0},
		{"duplicate", "a,b,c\na,d,e\n", true, 0},
		{"bad quoting", "a,b,c,\"x\n", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewTokenAuthenticator(writeTokenFile(t, tt.content))
			if tt.wantErr {
				if !errors.Is(err, ErrTokenFile) {
					t.Fatalf("err = %v, want ErrTokenFile", err)
				}
				return
			}
			if err != nil || len(a.entries) != tt.wantN {
				t.Fatalf("entries=%v err=%v", a, err)
			}
		})
	}
	for _, p := range []string{"", filepath.Join(t.TempDir(), "missing.csv")} {
		a, err := NewTokenAuthenticator(p)
		if err != nil || len(a.entries) != 0 {
			t.Fatalf("missing file %q: %v", p, err)
		}
	}
}
