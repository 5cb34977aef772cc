package apiserver

import (
	"net/http"
	"slices"
	"testing"
)

func TestRequestedIdentity(t *testing.T) {
	h := http.Header{}
	if u, _, err := requestedIdentity(h); u != nil || err != nil {
		t.Fatalf("no headers: %v %v", u, err)
	}
	h.Set(impersonateGroup, "devs")
	if _, _, err := requestedIdentity(h); err == nil {
		t.Fatal("groups without a user were accepted")
	}
	h.Set(impersonateUser, "system:serviceaccount:ns:bot")
	h.Set("Impersonate-Extra-Scopes%2Fa", "x")
	u, checks, err := requestedIdentity(h)
	if err != nil {
		t.Fatal(err)
	}
	if checks[0].Resource != "serviceaccounts" || checks[0].Namespace != "ns" || checks[0].Name != "bot" {
		t.Fatalf("user check %+v", checks[0])
	}
	if len(checks) != 3 || checks[2].Resource != "userextras" || checks[2].Subresource != "scopes/a" {
		t.Fatalf("checks %+v", checks)
	}
	if !slices.Contains(u.Groups, "devs") || !slices.Contains(u.Groups, "system:authenticated") ||
		slices.Contains(u.Groups, "system:serviceaccounts") {
		t.Fatalf("groups %v: want the asked groups plus system:authenticated only", u.Groups)
	}
	h.Del(impersonateGroup)
	h.Del("Impersonate-Extra-Scopes%2Fa")
	u, _, _ = requestedIdentity(h)
	if !slices.Contains(u.Groups, "system:serviceaccounts:ns") {
		t.Fatalf("a ServiceAccount without asked groups gets its own: %v", u.Groups)
	}
}
