package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

type fakeAuth struct {
	user *User
	ok   bool
	err  error
}

func (f fakeAuth) AuthenticateRequest(*http.Request) (*User, bool, error) { return f.user, f.ok, f.err }

func TestUnion(t *testing.T) {
	alice, bob := &User{Name: "alice"}, &User{Name: "bob"}
	bad := errors.New("bad credential")
	none := fakeAuth{}
	tests := []struct {
		name     string
		auths    []Authenticator
		wantUser *User
		wantErr  bool
	}{
		{"empty", nil, nil, false},
		{"nobody presented anything", []Authenticator{none, none}, nil, false},
		{"first success wins", []Authenticator{fakeAuth{user: alice, ok: true}, fakeAuth{user: bob, ok: true}}, alice, false},
		{"later success after no credentials", []Authenticator{none, fakeAuth{user: bob, ok: true}}, bob, false},
		{"success despite an earlier error", []Authenticator{fakeAuth{err: bad}, fakeAuth{user: bob, ok: true}}, bob, false},
		{"invalid credential is an error", []Authenticator{none, fakeAuth{err: bad}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := Union(tt.auths...).AuthenticateRequest(httptest.NewRequest("GET", "/", nil))
			if tt.wantErr != (err != nil) || (tt.wantErr && !errors.Is(err, bad)) {
				t.Fatalf("err = %v", err)
			}
			if ok != (tt.wantUser != nil) || u != tt.wantUser {
				t.Fatalf("user %v ok %v", u, ok)
			}
		})
	}
}
