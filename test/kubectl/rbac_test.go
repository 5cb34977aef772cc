package kubectl

import (
	"strings"
	"testing"
	"time"
)

// testRBAC: `kubectl get clusterroles`, `create role/rolebinding`,
// `auth can-i` (with --as and --list) and the 403 a denied user sees.
func testRBAC(t *testing.T, k *kc) {
	ns := k.newNamespace(t)
	out := k.ok(t, "get", "clusterroles")
	contains(t, "get clusterroles", out, "NAME", "CREATED AT", "cluster-admin", "system:discovery")
	out = k.ok(t, "get", "clusterrolebindings", "cluster-admin", "-o", "wide")
	contains(t, "get clusterrolebinding -o wide", out, "ROLE", "ClusterRole/cluster-admin", "system:masters")
	k.ok(t, "-n", ns, "create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
	k.ok(t, "-n", ns, "create", "rolebinding", "alice-reads", "--role=pod-reader", "--user=alice")
	contains(t, "get rolebinding", k.ok(t, "-n", ns, "get", "rolebinding", "alice-reads"), "Role/pod-reader")
	waitCanI(t, k, "yes", "-n", ns, "auth", "can-i", "list", "pods", "--as", "alice")
	if out, _, _ := k.run(t, "-n", ns, "auth", "can-i", "delete", "pods", "--as", "alice"); strings.TrimSpace(out) != "no" {
		t.Fatalf("can-i delete pods as alice: %q", out)
	}
	out = k.ok(t, "-n", ns, "auth", "can-i", "--list", "--as", "alice")
	contains(t, "can-i --list", out, "pods", "[get list]", "selfsubjectaccessreviews.authorization.k8s.io")
	errOut := k.fails(t, "-n", ns, "get", "secrets", "--as", "alice")
	contains(t, "denied get secrets", errOut,
		`secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "`+ns+`"`)
	k.ok(t, "-n", ns, "create", "rolebinding", "alice-rbac", "--clusterrole=system:aggregate-to-admin", "--user=alice")
	waitCanI(t, k, "yes", "-n", ns, "auth", "can-i", "create", "roles", "--as", "alice")
	errOut = k.fails(t, "-n", ns, "create", "role", "bad", "--verb=create", "--resource=pods", "--as", "alice")
	contains(t, "escalation", errOut, "is attempting to grant RBAC permissions not currently held")
	contains(t, "can-i as admin", k.ok(t, "auth", "can-i", "*", "*"), "yes")
}

func waitCanI(t *testing.T, k *kc, want string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _, _ := k.run(t, args...)
		if strings.TrimSpace(out) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl %v: %q, want %q", args, out, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
