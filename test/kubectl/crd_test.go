package kubectl

import (
	"strings"
	"testing"
	"time"
)

// testCRD: `kubectl apply` of a CRD and a custom resource, `get` with the
// printer columns and the short name, `explain`, a schema violation, and
// deleting the CRD.
func testCRD(t *testing.T, k *kc) {
	ns := k.newNamespace(t)
	k.ok(t, "apply", "-f", testdata("crd-widget.yaml"))
	t.Cleanup(func() { _, _, _ = k.run(t, "delete", "crd", "widgets.kc.example.com", "--ignore-not-found") })
	k.ok(t, "wait", "--for=condition=Established", "crd/widgets.kc.example.com", "--timeout=30s")
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, errOut, err := k.run(t, "-n", ns, "apply", "-f", testdata("cr-widget.yaml"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("apply the custom resource: %s", errOut)
		}
		time.Sleep(200 * time.Millisecond)
	}
	out := k.ok(t, "-n", ns, "get", "widgets")
	contains(t, "get widgets", out, "NAME", "SIZE", "AGE", "w1", "small")
	contains(t, "get by short name", k.ok(t, "-n", ns, "get", "kwd", "w1", "-o", "jsonpath={.spec.size}"), "small")
	out = k.ok(t, "explain", "widgets.spec")
	contains(t, "explain", out, "KIND:       Widget", "What the widget should be.", "size", "How big the widget is.")
	errOut := k.fails(t, "-n", ns, "patch", "widget", "w1", "--type=merge", "-p", `{"spec":{"size":"huge"}}`)
	contains(t, "schema violation", errOut, `spec.size: Unsupported value: "huge"`)
	k.ok(t, "delete", "crd", "widgets.kc.example.com", "--timeout=60s")
	_, errOut, err := k.run(t, "-n", ns, "get", "widgets")
	// kubectl's discovery cache may still know the type: then the list is a 404.
	if err == nil || !strings.Contains(errOut, "the server doesn't have a resource type") &&
		!strings.Contains(errOut, "the server could not find the requested resource") {
		t.Fatalf("get widgets after deleting the CRD: %v %s", err, errOut)
	}
}
