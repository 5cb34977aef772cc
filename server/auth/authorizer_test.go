package auth

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
)

func TestAuthorizer(t *testing.T) {
	admin := &User{Name: "system:admin", Groups: []string{GroupMasters, GroupAuthenticated}}
	node := &User{Name: "system:node:n1", Groups: []string{GroupNodes, GroupAuthenticated}}
	alice := &User{Name: "alice", Groups: []string{GroupAuthenticated}}
	podsGet := Attributes{Verb: "get", Resource: "pods", Namespace: "default", Name: "p", IsResource: true}
	nodeRule := func(_ context.Context, a Attributes) (Decision, string, error) {
		if strings.HasPrefix(a.User.Name, NodeUserPrefix) && a.Resource == "nodes" {
			if a.Name == strings.TrimPrefix(a.User.Name, NodeUserPrefix) {
				return Allow, "own node", nil
			}
			return Deny, "not your node", nil
		}
		return NoOpinion, "", nil
	}
	failing := func(context.Context, Attributes) (Decision, string, error) { return NoOpinion, "", errors.New("boom") }
	with := func(a Attributes, u *User) Attributes { a.User = u; return a }
	tests := []struct {
		name       string
		extra      []Rule
		attrs      Attributes
		want       bool
		wantReason string
		wantErr    bool
	}{
		{name: "masters may do anything", attrs: with(podsGet, admin), want: true},
		{name: "masters non-resource", attrs: Attributes{User: admin, Verb: "get", Path: "/healthz"}, want: true},
		{name: "others denied", attrs: with(podsGet, alice)},
		{name: "no-opinion reasons kept", extra: []Rule{func(context.Context, Attributes) (Decision, string, error) { return NoOpinion, "cache cold", nil }},
			attrs: with(podsGet, alice), wantReason: "cache cold"},
		{name: "no user", attrs: podsGet, wantReason: "no authenticated user"},
		{name: "extra rule allows", extra: []Rule{nodeRule},
			attrs: Attributes{User: node, Verb: "update", Resource: "nodes", Name: "n1", IsResource: true}, want: true},
		{name: "extra rule denies", extra: []Rule{nodeRule},
			attrs: Attributes{User: node, Verb: "update", Resource: "nodes", Name: "n2", IsResource: true}, wantReason: "not your node"},
		{name: "masters before extra rules", extra: []Rule{failing}, attrs: with(podsGet, admin), want: true},
		{name: "rule error", extra: []Rule{failing}, attrs: with(podsGet, alice), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := NewAuthorizer(zaptest.NewLogger(t), tt.extra...)
			ok, reason, err := z.Authorize(context.Background(), tt.attrs)
			if tt.wantErr != (err != nil) || ok != tt.want {
				t.Fatalf("allowed=%v reason=%q err=%v", ok, reason, err)
			}
			if !strings.Contains(reason, tt.wantReason) {
				t.Fatalf("reason %q does not contain %q", reason, tt.wantReason)
			}
		})
	}
}
