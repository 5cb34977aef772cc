package apiserver

import (
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// TestTokenRequestExpirationBounds checks upstream's bounds of
// spec.expirationSeconds: 10 minutes to 2^32 seconds.
func TestTokenRequestExpirationBounds(t *testing.T) {
	for _, tc := range []struct {
		seconds int64
		wantErr string
	}{
		{599, "less than 10 minutes"},
		{600, ""},
		{1 << 32, ""},
		{1<<32 + 1, "larger than 2^32 seconds"},
	} {
		e := tc.seconds
		err := validateTokenRequest(&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &e}})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("expirationSeconds %d: %v", e, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("expirationSeconds %d: err %v, want one saying %q", e, err, tc.wantErr)
		}
	}
}
