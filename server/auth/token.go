package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
)

// TokenAuthenticator authenticates "Authorization: Bearer <token>" headers
// against a kube-style static token file.
type TokenAuthenticator struct {
	entries []tokenEntry
}

type tokenEntry struct {
	hash [sha256.Size]byte // only the hash of the token is kept
	user User
}

var _ Authenticator = (*TokenAuthenticator)(nil)

// NewTokenAuthenticator reads a static token file as kube-apiserver's
// --token-auth-file: CSV lines `token,user,uid[,"group1,group2"]`. A
// missing file (or an empty path) means no tokens. The file is read once.
func NewTokenAuthenticator(path string) (*TokenAuthenticator, error) {
	a := &TokenAuthenticator{}
	if path == "" {
		return a, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open token file: %w", err)
	}
	defer f.Close()
	entries, err := parseTokenFile(f)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	a.entries = entries
	return a, nil
}

// ErrTokenFile is wrapped by token file syntax errors.
var ErrTokenFile = errors.New("malformed token file")

func parseTokenFile(r io.Reader) ([]tokenEntry, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	var out []tokenEntry
	seen := map[[sha256.Size]byte]bool{}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTokenFile, err)
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("%w: record %d has %d columns, need token,user,uid[,groups]", ErrTokenFile, line, len(rec))
		}
		if rec[0] == "" || rec[1] == "" {
			return nil, fmt.Errorf("%w: record %d has an empty token or user name", ErrTokenFile, line)
		}
		e := tokenEntry{hash: sha256.Sum256([]byte(rec[0])), user: User{Name: rec[1], UID: rec[2]}}
		if seen[e.hash] {
			return nil, fmt.Errorf("%w: record %d repeats a token", ErrTokenFile, line)
		}
		seen[e.hash] = true
		if len(rec) >= 4 && rec[3] != "" {
			e.user.Groups = strings.Split(rec[3], ",")
		}
		out = append(out, e)
	}
}

// AuthenticateRequest implements Authenticator. Requests without a bearer
// token are not this authenticator's business (ok=false, nil error); an
// unknown token is an error. Every entry is compared, in constant time.
func (a *TokenAuthenticator) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	token, ok := bearerToken(r)
	if !ok {
		return nil, false, nil
	}
	if token == "" {
		return nil, false, fmt.Errorf("%w: empty bearer token", ErrInvalidCredentials)
	}
	h := sha256.Sum256([]byte(token))
	var found *tokenEntry
	for i := range a.entries {
		if subtle.ConstantTimeCompare(h[:], a.entries[i].hash[:]) == 1 {
			found = &a.entries[i]
		}
	}
	if found == nil {
		return nil, false, fmt.Errorf("%w: unknown bearer token", ErrInvalidCredentials)
	}
	u := found.user
	u.Groups = withAuthenticated(u.Groups)
	return &u, true, nil
}

// bearerToken extracts the token of an "Authorization: Bearer" header;
// ok=false means the header is absent or uses another scheme.
func bearerToken(r *http.Request) (token string, ok bool) {
	const scheme = "bearer"
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if len(h) < len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	rest := h[len(scheme):]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	return strings.TrimSpace(rest), true
}
