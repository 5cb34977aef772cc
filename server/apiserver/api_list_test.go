package apiserver

import (
	"fmt"
	"net/url"
	"testing"
)

func podBody(name, labels, node string) string {
	spec := `"containers":[{"name":"c","image":"busybox"}]`
	if node != "" {
		spec += `,"nodeName":"` + node + `"`
	}
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","labels":{` + labels + `}},"spec":{` + spec + `}}`
}

const podsDefault = "/api/v1/namespaces/default/pods"

func names(m map[string]interface{}) []string {
	var out []string
	items, _ := get(m, "items").([]interface{})
	for _, it := range items {
		out = append(out, str(it, "metadata", "name"))
	}
	return out
}

func TestSelectors(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", podsDefault, podBody("a", `"app":"web","tier":"fe"`, "n1"))
	e.must(201, "POST", podsDefault, podBody("b", `"app":"web"`, ""))
	e.must(201, "POST", podsDefault, podBody("c", `"app":"db"`, "n1"))
	cases := []struct {
		query string
		code  int
		want  string
	}{
		{"labelSelector=app%3Dweb", 200, "[a b]"},
		{"labelSelector=app%3Dweb,tier!%3Dfe", 200, "[b]"},
		{"labelSelector=" + url.QueryEscape("app in (db,web),!tier"), 200, "[b c]"},
		{"fieldSelector=spec.nodeName%3Dn1", 200, "[a c]"},
		{"fieldSelector=metadata.name%3Db", 200, "[b]"},
		{"fieldSelector=spec.nodeName%3Dn1&labelSelector=app%3Ddb", 200, "[c]"},
		{"fieldSelector=spec.bogus%3Dx", 400, ""},
		{"labelSelector=" + url.QueryEscape("app in (x"), 400, ""},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			m := e.must(c.code, "GET", podsDefault+"?"+c.query, "")
			if c.code == 200 && fmt.Sprint(names(m)) != c.want {
				t.Fatalf("got %v want %s", names(m), c.want)
			}
			if c.code == 400 && str(m, "reason") != "BadRequest" {
				t.Fatalf("status %v", m)
			}
		})
	}
	m := e.must(400, "GET", podsDefault+"?fieldSelector=spec.bogus%3Dx", "")
	if str(m, "message") != "field label not supported: spec.bogus" {
		t.Fatalf("message %q", str(m, "message"))
	}
}

func TestPagination(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	for _, ns := range []string{"a", "b"} {
		e.createNamespace(ns)
		for i := 0; i < 3; i++ {
			e.must(201, "POST", "/api/v1/namespaces/"+ns+"/configmaps", cmBody(fmt.Sprintf("cm%d", i), ""))
		}
	}
	var all []string
	next, firstRV := "", ""
	for page := 0; ; page++ {
		path := "/api/v1/configmaps?limit=4"
		if next != "" {
			path += "&continue=" + next
		}
		m := e.must(200, "GET", path, "")
		all = append(all, names(m)...)
		if page == 0 {
			firstRV = str(m, "metadata", "resourceVersion")
			if rem := get(m, "metadata", "remainingItemCount"); rem == nil || rem.(float64) != 2 {
				t.Fatalf("remainingItemCount %v", rem)
			}
			e.must(201, "POST", "/api/v1/namespaces/b/configmaps", cmBody("zz", "")) // written between pages
		} else if str(m, "metadata", "resourceVersion") != firstRV {
			t.Fatalf("page rv %s want first page's %s", str(m, "metadata", "resourceVersion"), firstRV)
		}
		next = str(m, "metadata", "continue")
		if next == "" {
			break
		}
	}
	// Continue pages are read at the first page's revision: "zz", written
	// between pages, is not part of this list (as with etcd's MVCC reads).
	if fmt.Sprint(all) != "[cm0 cm1 cm2 cm0 cm1 cm2]" {
		t.Fatalf("pages gave %v", all)
	}
	m := e.must(200, "GET", "/api/v1/namespaces/a/configmaps?limit=1&labelSelector=x%3Dy", "")
	if len(names(m)) != 0 || str(m, "metadata", "continue") != "" {
		t.Fatalf("filtered page %v", m)
	}
	bad := e.must(400, "GET", "/api/v1/configmaps?limit=1&continue=%21%21", "")
	if str(bad, "reason") != "BadRequest" {
		t.Fatalf("bad token: %v", bad)
	}
	e.must(400, "GET", "/api/v1/configmaps?limit=-1", "")
}

// TestPaginationExpired checks that a continue token whose revision left the
// watch history gets 410 Expired with a token that continues at the current
// state, as kube-apiserver answers for a compacted revision.
func TestPaginationExpired(t *testing.T) {
	e := newAPIEnv(t, 8, nil)
	e.createNamespace("a")
	for i := 0; i < 4; i++ {
		e.must(201, "POST", "/api/v1/namespaces/a/configmaps", cmBody(fmt.Sprintf("cm%d", i), ""))
	}
	first := e.must(200, "GET", "/api/v1/namespaces/a/configmaps?limit=2", "")
	for i := 0; i < 12; i++ { // push the first page's revision out of the history
		e.must(201, "POST", "/api/v1/namespaces/a/configmaps", cmBody(fmt.Sprintf("x%02d", i), ""))
	}
	gone := e.must(410, "GET", "/api/v1/namespaces/a/configmaps?limit=2&continue="+str(first, "metadata", "continue"), "")
	if str(gone, "reason") != "Expired" || str(gone, "metadata", "continue") == "" {
		t.Fatalf("expired continue: %v", gone)
	}
	next := e.must(200, "GET", "/api/v1/namespaces/a/configmaps?limit=2&continue="+str(gone, "metadata", "continue"), "")
	if fmt.Sprint(names(next)) != "[cm2 cm3]" {
		t.Fatalf("inconsistent continue gave %v", names(next))
	}
}

func TestTableOutput(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", podsDefault, podBody("a", `"app":"web"`, "n1"))
	kubectlAccept := "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	tbl := e.must(200, "GET", podsDefault, "", kubectlAccept)
	if str(tbl, "kind") != "Table" || str(tbl, "apiVersion") != "meta.k8s.io/v1" {
		t.Fatalf("table: %v", tbl)
	}
	cols := get(tbl, "columnDefinitions").([]interface{})
	rows := get(tbl, "rows").([]interface{})
	if str(cols[0], "name") != "Name" || len(rows) != 1 {
		t.Fatalf("cols %v rows %v", cols, rows)
	}
	cells := get(rows[0], "cells").([]interface{})
	if len(cells) != len(cols) || cells[0] != "a" {
		t.Fatalf("cells %v for %d columns", cells, len(cols))
	}
	if str(rows[0], "object", "kind") != "PartialObjectMetadata" || str(rows[0], "object", "metadata", "name") != "a" {
		t.Fatalf("row object %v", get(rows[0], "object"))
	}
	one := e.must(200, "GET", podsDefault+"/a?includeObject=Object", "", kubectlAccept)
	if r := get(one, "rows").([]interface{}); str(r[0], "object", "kind") != "Pod" {
		t.Fatalf("includeObject=Object: %v", r[0])
	}
	none := e.must(200, "GET", podsDefault+"?includeObject=None", "", kubectlAccept)
	if r := get(none, "rows").([]interface{}); get(r[0], "object") != nil {
		t.Fatalf("includeObject=None: %v", r[0])
	}
	v1b1 := e.must(200, "GET", podsDefault, "", "Accept: application/json;as=Table;v=v1beta1;g=meta.k8s.io")
	if str(v1b1, "apiVersion") != "meta.k8s.io/v1beta1" {
		t.Fatalf("v1beta1 table %v", v1b1["apiVersion"])
	}
	pl := e.must(200, "GET", podsDefault, "", "Accept: application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
	if str(pl, "kind") != "PartialObjectMetadataList" || len(names(pl)) != 1 {
		t.Fatalf("partial list %v", pl)
	}
	p := e.must(200, "GET", podsDefault+"/a", "", "Accept: application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
	if str(p, "kind") != "PartialObjectMetadata" || get(p, "spec") != nil {
		t.Fatalf("partial %v", p)
	}
	e.must(406, "GET", podsDefault, "", "Accept: application/json;as=Table;v=v9;g=meta.k8s.io")
	y := e.do("GET", podsDefault+"/a", "", "Accept: application/yaml")
	if y.code != 200 || y.header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("yaml %d %v", y.code, y.header)
	}
}
