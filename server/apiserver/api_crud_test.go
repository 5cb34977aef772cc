package apiserver

import (
	"bytes"
	"strings"
	"testing"
)

const cmDefault = "/api/v1/namespaces/default/configmaps"

func cmBody(name, extra string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"` + extra + `},"data":{"a":"1"}}`
}

func TestAuthnAuthz(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	cases := []struct {
		name, method, path, auth string
		code                     int
		msg                      string
	}{
		{"no credentials", "GET", cmDefault, "Authorization: ", 401, "Unauthorized"},
		{"bad token", "GET", cmDefault, "Authorization: Bearer bad", 401, "Unauthorized"},
		{"reader can list", "GET", cmDefault, "Authorization: Bearer reader", 200, ""},
		{"reader cannot create", "POST", cmDefault, "Authorization: Bearer reader", 403,
			`configmaps is forbidden: User "reader" cannot create resource "configmaps" in API group "" in the namespace "default"`},
		{"named get", "GET", cmDefault + "/x", "Authorization: Bearer nobody", 403,
			`configmaps "x" is forbidden: User "nobody" cannot get resource "configmaps" in API group "" in the namespace "default"`},
		{"cluster scope", "GET", "/apis/apps/v1/deployments", "Authorization: Bearer nobody", 403,
			`deployments.apps is forbidden: User "nobody" cannot list resource "deployments" in API group "apps" at the cluster scope`},
		{"non-resource", "GET", "/healthz", "Authorization: Bearer nobody", 403,
			`forbidden: User "nobody" cannot get path "/healthz"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, cmBody("x", ""), c.auth)
			if r.code != c.code {
				t.Fatalf("code %d want %d: %s", r.code, c.code, r.body)
			}
			if c.msg != "" && str(r.obj(t), "message") != c.msg {
				t.Fatalf("message %q want %q", str(r.obj(t), "message"), c.msg)
			}
		})
	}
}

func TestCRUD(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	created := e.must(201, "POST", cmDefault, cmBody("c1", ""))
	rv := str(created, "metadata", "resourceVersion")
	if rv == "" || str(created, "metadata", "uid") == "" || str(created, "metadata", "creationTimestamp") == "" {
		t.Fatalf("system fields not set: %v", created["metadata"])
	}
	if str(created, "kind") != "ConfigMap" || str(created, "apiVersion") != "v1" {
		t.Fatalf("type meta: %v", created)
	}
	got := e.must(200, "GET", cmDefault+"/c1", "")
	if str(got, "metadata", "resourceVersion") != rv {
		t.Fatalf("rv on read %q want %q", str(got, "metadata", "resourceVersion"), rv)
	}
	dup := e.must(409, "POST", cmDefault, cmBody("c1", ""))
	if str(dup, "reason") != "AlreadyExists" || str(dup, "message") != `configmaps "c1" already exists` {
		t.Fatalf("dup: %v", dup)
	}
	same := e.must(200, "PUT", cmDefault+"/c1", cmBody("c1", `,"resourceVersion":"`+rv+`"`))
	if str(same, "metadata", "resourceVersion") != rv {
		t.Fatalf("no-op update changed rv: %v", same["metadata"])
	}
	upd := e.must(200, "PUT", cmDefault+"/c1", strings.Replace(cmBody("c1", `,"resourceVersion":"`+rv+`"`), `"1"`, `"2"`, 1))
	if str(upd, "metadata", "resourceVersion") == rv || str(upd, "metadata", "uid") != str(created, "metadata", "uid") {
		t.Fatalf("update: %v", upd["metadata"])
	}
	stale := e.must(409, "PUT", cmDefault+"/c1", strings.Replace(cmBody("c1", `,"resourceVersion":"`+rv+`"`), `"1"`, `"3"`, 1))
	want := `Operation cannot be fulfilled on configmaps "c1": the object has been modified; please apply your changes to the latest version and try again`
	if str(stale, "reason") != "Conflict" || str(stale, "message") != want {
		t.Fatalf("stale: %v", stale)
	}
	e.must(200, "PUT", cmDefault+"/c1", cmBody("c1", "")) // unconditional
	e.must(400, "PUT", cmDefault+"/c1", cmBody("other", ""))
	e.must(404, "PUT", cmDefault+"/nope", cmBody("nope", ""))
	list := e.must(200, "GET", cmDefault, "")
	if str(list, "kind") != "ConfigMapList" || len(get(list, "items").([]interface{})) != 1 || str(list, "metadata", "resourceVersion") == "" {
		t.Fatalf("list: %v", list)
	}
	del := e.must(200, "DELETE", cmDefault+"/c1", "")
	if str(del, "kind") != "Status" || str(del, "status") != "Success" || str(del, "details", "name") != "c1" {
		t.Fatalf("delete: %v", del)
	}
	nf := e.must(404, "GET", cmDefault+"/c1", "")
	if str(nf, "message") != `configmaps "c1" not found` || str(nf, "details", "kind") != "configmaps" {
		t.Fatalf("not found: %v", nf)
	}
}

func TestCreateErrors(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	big := strings.Repeat("x", 4<<20)
	cases := []struct {
		name, path, body string
		code             int
		reason, msg      string
	}{
		{"namespace mismatch", cmDefault, cmBody("a", `,"namespace":"other"`), 400, "BadRequest", "does not match the namespace sent on the request"},
		{"missing namespace", "/api/v1/namespaces/nope/configmaps", cmBody("a", ""), 404, "NotFound", `namespaces "nope" not found`},
		{"bad name", cmDefault, cmBody("Bad_Name", ""), 422, "Invalid", `ConfigMap "Bad_Name" is invalid: metadata.name`},
		{"slash name", cmDefault, cmBody("a/b", ""), 422, "Invalid", `metadata.name: Invalid value: "a/b"`},
		{"no name", cmDefault, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`, 422, "Invalid", "name or generateName is required"},
		{"strict unknown", cmDefault + "?fieldValidation=Strict", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"spec":{"foo":1}}`,
			400, "BadRequest", `strict decoding error: unknown field "spec"`},
		{"strict duplicate", cmDefault + "?fieldValidation=Strict", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"}}`,
			400, "BadRequest", `duplicate field "metadata.name"`},
		{"wrong type", cmDefault, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":5}}`, 400, "BadRequest", "ConfigMap in version \"v1\" cannot be handled as a ConfigMap"},
		{"wrong kind", cmDefault, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}`, 400, "BadRequest", "the kind in the data (Secret) does not match the expected kind (ConfigMap)"},
		{"wrong version", cmDefault, `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"a"}}`, 400, "BadRequest", ""},
		{"too large", cmDefault, `{"data":{"a":"` + big + `"}}`, 413, "RequestEntityTooLarge", "limit is 3145728"},
		{"bad field validation", cmDefault + "?fieldValidation=Loose", cmBody("a", ""), 400, "BadRequest", "fieldValidation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", c.path, c.body)
			if r.code != c.code {
				t.Fatalf("code %d want %d: %s", r.code, c.code, r.body)
			}
			st := r.obj(t)
			if str(st, "reason") != c.reason || !strings.Contains(str(st, "message"), c.msg) {
				t.Fatalf("status %s", r.body)
			}
		})
	}
	if n, _ := e.store.Count(t.Context(), "/registry/configmaps/"); n != 0 {
		t.Fatalf("store touched by bad requests: %d configmaps", n)
	}
}

func TestCreateMisc(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	r := e.do("POST", cmDefault+"?fieldValidation=Warn", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w"},"bogus":1}`)
	if r.code != 201 || !strings.Contains(r.header.Get("Warning"), `unknown field \"bogus\"`) {
		t.Fatalf("warn: %d %v %s", r.code, r.header, r.body)
	}
	gen := e.must(201, "POST", cmDefault, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"gen-"}}`)
	if n := str(gen, "metadata", "name"); !strings.HasPrefix(n, "gen-") || len(n) != 9 {
		t.Fatalf("generated name %q", n)
	}
	yaml := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  k: v\n"
	e.must(201, "POST", cmDefault, yaml, "Content-Type: application/yaml")
	dry := e.must(201, "POST", cmDefault+"?dryRun=All", cmBody("dry", ""))
	if str(dry, "metadata", "name") != "dry" {
		t.Fatalf("dry run: %v", dry)
	}
	e.must(404, "GET", cmDefault+"/dry", "")
	// cluster-scoped create drops a namespace in the body, as upstream
	ns := e.must(201, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n2","namespace":"x"}}`)
	if str(ns, "metadata", "namespace") != "" {
		t.Fatalf("namespace on a namespace: %v", ns["metadata"])
	}
	e.must(405, "POST", cmDefault+"/w", cmBody("w", ""))
	e.must(404, "GET", "/api/v1/nosuchthings", "")
	e.must(404, "GET", "/api/v1/configmaps/x", "")
	e.must(415, "POST", cmDefault, cmBody("z", ""), "Content-Type: text/plain")
	e.must(406, "GET", cmDefault, "", "Accept: application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io")
	e.must(406, "GET", cmDefault, "", "Accept: text/html")
	if r := e.do("GET", cmDefault, "", "Accept: application/vnd.kubernetes.protobuf, application/json"); r.code != 200 ||
		r.header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" || !bytes.HasPrefix(r.body, []byte("k8s\x00")) {
		t.Fatalf("protobuf list: %d %s %q", r.code, r.header.Get("Content-Type"), r.body)
	}
	e.must(200, "GET", "/api/v1/configmaps", "") // all namespaces
}
