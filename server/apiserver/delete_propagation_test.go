package apiserver

import (
	"strings"
	"testing"
)

// TestDeleteJobDefaultsToOrphan: batch/v1 Jobs deleted without a policy
// orphan their pods and warn, as upstream; an explicit policy wins.
func TestDeleteJobDefaultsToOrphan(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	const jobs = "/apis/batch/v1/namespaces/default/jobs"
	body := func(name string) string {
		return `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"` + name + `"},"spec":{"template":{"spec":{` +
			`"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1.36"}]}}}}`
	}
	e.must(201, "POST", jobs, body("j"))
	r := e.do("DELETE", jobs+"/j", "")
	if r.code != 200 || !strings.Contains(r.header.Get("Warning"), "child pods are preserved by default") {
		t.Fatalf("delete without policy: %d %q", r.code, r.header.Get("Warning"))
	}
	d := e.must(200, "GET", jobs+"/j", "")
	if f := get(d, "metadata", "finalizers").([]interface{}); len(f) != 1 || f[0] != "orphan" {
		t.Fatalf("finalizers %v, want [orphan]", f)
	}
	e.must(201, "POST", jobs, body("k"))
	r = e.do("DELETE", jobs+"/k?propagationPolicy=Background", "")
	if r.code != 200 || r.header.Get("Warning") != "" {
		t.Fatalf("delete with Background: %d %q", r.code, r.header.Get("Warning"))
	}
	e.must(404, "GET", jobs+"/k", "")
}
