package kubectl

import (
	"strings"
	"testing"
)

// testServerSideApply: `kubectl apply --server-side` (create, re-apply),
// a conflict with another manager, `--force-conflicts`, and the upgrade of
// an object created by client-side apply.
func testServerSideApply(t *testing.T, k *kc) {
	ns := k.newNamespace(t)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  color: blue\n"
	contains(t, "apply --server-side", k.stdin(t, cm, "-n", ns, "apply", "--server-side", "-f", "-"), "configmap/ssa serverside-applied")
	contains(t, "managed fields", k.ok(t, "-n", ns, "get", "cm", "ssa", "-o", "yaml", "--show-managed-fields"),
		"manager: kubectl", "operation: Apply", "f:color")
	k.ok(t, "-n", ns, "patch", "cm", "ssa", "--field-manager=other", "-p", `{"data":{"color":"red"}}`)
	out, err := k.stdinErr(t, cm, "-n", ns, "apply", "--server-side", "-f", "-")
	if err == nil || !strings.Contains(out, `Apply failed with 1 conflict: conflict with "other"`) || !strings.Contains(out, ".data.color") {
		t.Fatalf("conflicting apply: %v %s", err, out)
	}
	k.stdin(t, cm, "-n", ns, "apply", "--server-side", "--force-conflicts", "-f", "-")
	if got := k.ok(t, "-n", ns, "get", "cm", "ssa", "-o", "jsonpath={.data.color}"); got != "blue" {
		t.Fatalf("color after --force-conflicts: %q", got)
	}
	// Client-side apply first, then server-side: kubectl migrates the
	// ownership and the apply goes through without conflicts.
	csa := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\ndata:\n  a: \"1\"\n"
	k.stdin(t, csa, "-n", ns, "apply", "-f", "-")
	contains(t, "upgrade to server-side", k.stdin(t, strings.Replace(csa, `"1"`, `"2"`, 1), "-n", ns, "apply", "--server-side", "-f", "-"),
		"serverside-applied")
	if got := k.ok(t, "-n", ns, "get", "cm", "csa", "-o", "jsonpath={.data.a}"); got != "2" {
		t.Fatalf("value after the upgrade: %q", got)
	}
}
