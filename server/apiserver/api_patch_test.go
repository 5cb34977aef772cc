package apiserver

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

const depPath = "/apis/apps/v1/namespaces/default/deployments"

func deployBody(name string, replicas int) string {
	return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `","labels":{"app":"` + name + `"}},
	"spec":{"replicas":` + strconv.Itoa(replicas) + `,"selector":{"matchLabels":{"app":"` + name + `"}},
	"template":{"metadata":{"labels":{"app":"` + name + `"}},"spec":{"containers":[{"name":"web","image":"nginx:1.25"},{"name":"side","image":"busybox"}]}}}}`
}

func TestPatchTypes(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", cmDefault, cmBody("p", ""))
	e.must(201, "POST", depPath, deployBody("d", 1))
	cases := []struct {
		name, path, ctype, patch string
		code                     int
		check                    func(t *testing.T, m map[string]interface{})
	}{
		{"merge", cmDefault + "/p", "application/merge-patch+json", `{"data":{"b":"2","a":null}}`, 200, func(t *testing.T, m map[string]interface{}) {
			if str(m, "data", "b") != "2" || get(m, "data", "a") != nil {
				t.Fatalf("data %v", m["data"])
			}
		}},
		{"json patch", cmDefault + "/p", "application/json-patch+json", `[{"op":"add","path":"/data/c","value":"3"}]`, 200, func(t *testing.T, m map[string]interface{}) {
			if str(m, "data", "c") != "3" {
				t.Fatalf("data %v", m["data"])
			}
		}},
		{"json patch test fails", cmDefault + "/p", "application/json-patch+json", `[{"op":"test","path":"/data/c","value":"9"}]`, 422, nil},
		{"json patch garbage", cmDefault + "/p", "application/json-patch+json", `{"op":1}`, 400, nil},
		{"strategic merges containers by name", depPath + "/d", "application/strategic-merge-patch+json",
			`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}}`, 200, func(t *testing.T, m map[string]interface{}) {
				cs := get(m, "spec", "template", "spec", "containers").([]interface{})
				if len(cs) != 2 || str(cs[0], "image") != "nginx:1.26" || str(cs[1], "image") != "busybox" {
					t.Fatalf("containers %v", cs)
				}
				if get(m, "metadata", "generation").(float64) != 2 {
					t.Fatalf("generation %v", get(m, "metadata", "generation"))
				}
			}},
		{"stale rv in patch", cmDefault + "/p", "application/merge-patch+json", `{"metadata":{"resourceVersion":"1"}}`, 409, nil},
		{"strict unknown field in patch", cmDefault + "/p?fieldValidation=Strict", "application/merge-patch+json", `{"spec":{"x":1}}`, 400, nil},
		{"apply without fieldManager", cmDefault + "/p", "application/apply-patch+yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}", 400, nil},
		{"apply of another kind", cmDefault + "/p?fieldManager=t", "application/apply-patch+yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: p}", 400, nil},
		{"apply", cmDefault + "/p?fieldManager=t", "application/apply-patch+yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata: {applied: \"yes\"}", 200,
			func(t *testing.T, m map[string]any) {
				if !strings.Contains(fmt.Sprint(m["metadata"]), "manager:t operation:Apply") {
					t.Fatalf("managedFields lack the apply: %v", m["metadata"])
				}
			}},
		{"apply as cbor", cmDefault + "/p?fieldManager=t", "application/apply-patch+cbor", `{}`, 415, nil},
		{"force on a merge patch", cmDefault + "/p?force=true", "application/merge-patch+json", `{}`, 400, nil},
		{"unknown patch type", cmDefault + "/p", "text/plain", `{}`, 415, nil},
		{"missing object", cmDefault + "/nope", "application/merge-patch+json", `{}`, 404, nil},
		{"rename refused", cmDefault + "/p", "application/merge-patch+json", `{"metadata":{"name":"q"}}`, 400, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := e.must(c.code, "PATCH", c.path, c.patch, "Content-Type: "+c.ctype)
			if c.check != nil {
				c.check(t, m)
			}
		})
	}
}

func TestStatusAndScale(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", depPath, deployBody("d", 2))
	// a main update cannot change status; a status update cannot change spec
	e.must(200, "PATCH", depPath+"/d", `{"status":{"replicas":7}}`, "Content-Type: application/merge-patch+json")
	if m := e.must(200, "GET", depPath+"/d", ""); get(m, "status", "replicas") != nil {
		t.Fatalf("main update changed status: %v", m["status"])
	}
	st := e.must(200, "PATCH", depPath+"/d/status", `{"status":{"replicas":2,"readyReplicas":1},"spec":{"replicas":9}}`, "Content-Type: application/merge-patch+json")
	if get(st, "status", "replicas").(float64) != 2 || get(st, "spec", "replicas").(float64) != 2 {
		t.Fatalf("status patch: spec %v status %v", st["spec"], st["status"])
	}
	sc := e.must(200, "GET", depPath+"/d/scale", "")
	if str(sc, "kind") != "Scale" || get(sc, "spec", "replicas").(float64) != 2 || str(sc, "status", "selector") != "app=d" {
		t.Fatalf("scale: %v", sc)
	}
	sc = e.must(200, "PATCH", depPath+"/d/scale", `{"spec":{"replicas":5}}`, "Content-Type: application/merge-patch+json")
	if get(sc, "spec", "replicas").(float64) != 5 {
		t.Fatalf("scale patch: %v", sc)
	}
	put := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d","resourceVersion":"` + str(sc, "metadata", "resourceVersion") + `"},"spec":{"replicas":3}}`
	e.must(200, "PUT", depPath+"/d/scale", put)
	e.must(409, "PUT", depPath+"/d/scale", put) // stale now
	e.must(422, "PATCH", depPath+"/d/scale", `{"spec":{"replicas":-1}}`, "Content-Type: application/merge-patch+json")
	if m := e.must(200, "GET", depPath+"/d", ""); get(m, "spec", "replicas").(float64) != 3 {
		t.Fatalf("replicas after scale: %v", get(m, "spec", "replicas"))
	}
	e.must(404, "GET", cmDefault+"/x/scale", "")
	e.must(404, "GET", depPath+"/d/bogus", "")
}
