package auth

import (
	"context"
	"testing"
)

// TestNodeRuleNetworkPolicies: agents enforce NetworkPolicy, so a node may
// read policies, namespaces and every pod (peers live on any node), but
// not change policies.
func TestNodeRuleNetworkPolicies(t *testing.T) {
	r := NodeRule(fakeGraph{})
	tests := []struct {
		name string
		a    Attributes
		want Decision
	}{
		{"list policies", res("list", "networking.k8s.io", "networkpolicies", "", "", ""), Allow},
		{"watch policies", res("watch", "networking.k8s.io", "networkpolicies", "", "", ""), Allow},
		{"get policy", res("get", "networking.k8s.io", "networkpolicies", "", "default", "p"), Allow},
		{"list namespaces", res("list", "", "namespaces", "", "", ""), Allow},
		{"watch namespaces", res("watch", "", "namespaces", "", "", ""), Allow},
		{"list all pods", res("list", "", "pods", "", "", ""), Allow},
		{"watch all pods", res("watch", "", "pods", "", "", ""), Allow},
		{"create policy", res("create", "networking.k8s.io", "networkpolicies", "", "default", ""), Deny},
		{"delete policy", res("delete", "networking.k8s.io", "networkpolicies", "", "default", "p"), Deny},
		{"update policy", res("update", "networking.k8s.io", "networkpolicies", "", "default", "p"), Deny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := r(context.Background(), tc.a)
			if err != nil || got != tc.want {
				t.Fatalf("decision = %v (%q, %v), want %v", got, reason, err, tc.want)
			}
		})
	}
}
