package auth

import (
	"context"
	"testing"
)

func TestPublicInfoAndSelfReviews(t *testing.T) {
	sa := &User{Name: "system:serviceaccount:ns:x", Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	user := &User{Name: "alice", Groups: []string{"system:authenticated"}}
	tests := []struct {
		name string
		a    Attributes
		want Decision
	}{
		{"version", Attributes{User: user, Verb: "get", Path: "/version"}, Allow},
		{"group discovery", Attributes{User: user, Verb: "get", Path: "/apis/apps/v1"}, Allow},
		{"openapi", Attributes{User: user, Verb: "get", Path: "/openapi/v3/api/v1"}, Allow},
		{"post to version", Attributes{User: user, Verb: "post", Path: "/version"}, NoOpinion},
		{"metrics are not public", Attributes{User: user, Verb: "get", Path: "/metrics"}, NoOpinion},
		{"prefix lookalike", Attributes{User: user, Verb: "get", Path: "/apisx"}, NoOpinion},
		{"jwks for a service account", Attributes{User: sa, Verb: "get", Path: "/openid/v1/jwks"}, Allow},
		{"jwks for a user", Attributes{User: user, Verb: "get", Path: "/openid/v1/jwks"}, NoOpinion},
		{"resource request", Attributes{User: user, Verb: "get", IsResource: true, Resource: "pods"}, NoOpinion},
	}
	rule := PublicInfo()
	for _, tt := range tests {
		if d, _, _ := rule(context.Background(), tt.a); d != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, d, tt.want)
		}
	}
	self := SelfReviews()
	ok := Attributes{User: user, Verb: "create", IsResource: true, APIGroup: "authentication.k8s.io", Resource: "selfsubjectreviews"}
	if d, _, _ := self(context.Background(), ok); d != Allow {
		t.Errorf("selfsubjectreviews: %v", d)
	}
	other := ok
	other.Resource = "tokenreviews"
	if d, _, _ := self(context.Background(), other); d != NoOpinion {
		t.Errorf("tokenreviews allowed to everyone")
	}
}
