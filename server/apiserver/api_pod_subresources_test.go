package apiserver

import (
	"strings"
	"testing"
)

// TestPodEphemeralContainersAndResize drives pods/ephemeralcontainers and
// pods/resize over HTTP as kubectl debug and the resize e2e tests do.
func TestPodEphemeralContainersAndResize(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", podsDefault, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[
		{"name":"c","image":"busybox","resources":{"requests":{"cpu":"20m","memory":"35Mi"}}}]}}`)
	smp := "Content-Type: application/strategic-merge-patch+json"

	p := e.must(200, "PATCH", podsDefault+"/p/ephemeralcontainers",
		`{"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox","stdin":true,"tty":true}]}}`, smp)
	if g := get(p, "metadata", "generation"); g != 2.0 {
		t.Fatalf("generation after adding an ephemeral container: %v", g)
	}
	got := e.must(200, "GET", podsDefault+"/p/ephemeralcontainers", "")
	if ecs, _ := get(got, "spec", "ephemeralContainers").([]interface{}); len(ecs) != 1 || str(ecs[0], "name") != "debugger" {
		t.Fatalf("ephemeral containers: %v", get(got, "spec"))
	}
	st := e.must(422, "PATCH", podsDefault+"/p/ephemeralcontainers",
		`{"spec":{"ephemeralContainers":[{"name":"c","image":"busybox"}]}}`, smp)
	if !strings.Contains(str(st, "message"), `name: Duplicate value: "c"`) {
		t.Fatalf("duplicate name: %v", str(st, "message"))
	}

	p = e.must(200, "PATCH", podsDefault+"/p/resize",
		`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"25m"},"limits":{"cpu":"35m"}}}]}}`, smp)
	c0, _ := get(p, "spec", "containers").([]interface{})
	if g := get(p, "metadata", "generation"); g != 3.0 || len(c0) != 1 || str(c0[0], "resources", "limits", "cpu") != "35m" {
		t.Fatalf("resize: generation %v resources %v", g, get(p, "spec", "containers"))
	}
	st = e.must(422, "PATCH", podsDefault+"/p/resize",
		`{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":null}}}]}}`, smp)
	if !strings.Contains(str(st, "message"), "resource requests cannot be removed") {
		t.Fatalf("removed request: %v", str(st, "message"))
	}
	disc := e.must(200, "GET", "/api/v1", "")
	var subs []string
	for _, r := range get(disc, "resources").([]interface{}) {
		if n := str(r, "name"); strings.HasPrefix(n, "pods/") {
			subs = append(subs, n)
		}
	}
	if j := strings.Join(subs, ","); !strings.Contains(j, "pods/ephemeralcontainers") || !strings.Contains(j, "pods/resize") {
		t.Fatalf("discovery lacks the subresources: %s", j)
	}
}
