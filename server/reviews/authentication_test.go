package reviews

import (
	"context"
	"errors"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orch/orch/server/auth"
)

type fakeTokens map[string]*auth.User

func (f fakeTokens) AuthenticateToken(_ context.Context, tok string, auds []string) (*auth.User, []string, bool, error) {
	if tok == "broken" {
		return nil, nil, false, errors.New("invalid service account token: token has expired")
	}
	u, ok := f[tok]
	return u, auds, ok, nil
}

func TestTokenReview(t *testing.T) {
	create := tokenReview(fakeTokens{"good": {Name: "system:serviceaccount:ns:sa", UID: "u", Groups: []string{"g"},
		Extra: map[string][]string{"k": {"v"}}}})
	tests := []struct {
		token   string
		authed  bool
		errText string
	}{
		{"good", true, ""},
		{"unknown", false, "token not recognised"},
		{"broken", false, "invalid service account token: token has expired"},
	}
	for _, tt := range tests {
		out, err := create(context.Background(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tt.token}})
		if err != nil {
			t.Fatal(err)
		}
		st := out.(*authenticationv1.TokenReview).Status
		if st.Authenticated != tt.authed || st.Error != tt.errText {
			t.Errorf("%s: %+v", tt.token, st)
		}
		if tt.authed && (st.User.Username != "system:serviceaccount:ns:sa" || st.User.Extra["k"][0] != "v") {
			t.Errorf("user %+v", st.User)
		}
	}
	if _, err := create(context.Background(), &authenticationv1.TokenReview{}); !apierrors.IsInvalid(err) {
		t.Errorf("empty token: %v, want 422", err)
	}
}

func TestSelfSubjectReview(t *testing.T) {
	ctx := auth.WithUser(context.Background(), &auth.User{Name: "alice", Groups: []string{"system:authenticated"}})
	out, err := selfSubjectReview(ctx, &authenticationv1.SelfSubjectReview{})
	if err != nil {
		t.Fatal(err)
	}
	if u := out.(*authenticationv1.SelfSubjectReview).Status.UserInfo; u.Username != "alice" || len(u.Groups) != 1 {
		t.Fatalf("user %+v", u)
	}
	if _, err := selfSubjectReview(context.Background(), &authenticationv1.SelfSubjectReview{}); err == nil {
		t.Fatal("no user in context was accepted")
	}
}
