package apiserver

import (
	"strings"
	"testing"
)

func TestDeleteFinalizers(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", cmDefault, cmBody("f", `,"finalizers":["example.com/x"]`))
	d := e.must(200, "DELETE", cmDefault+"/f", "")
	if str(d, "kind") != "ConfigMap" || str(d, "metadata", "deletionTimestamp") == "" {
		t.Fatalf("deferred delete answered %v", d)
	}
	e.must(200, "DELETE", cmDefault+"/f", "") // again: still pending
	got := e.must(200, "GET", cmDefault+"/f", "")
	e.must(200, "PATCH", cmDefault+"/f", `{"metadata":{"finalizers":null}}`, "Content-Type: application/merge-patch+json")
	e.must(404, "GET", cmDefault+"/f", "")
	_ = got
	// propagation policies add the GC finalizers
	for policy, fin := range map[string]string{"Orphan": "orphan", "Foreground": "foregroundDeletion"} {
		e.must(201, "POST", cmDefault, cmBody("p", ""))
		d := e.must(200, "DELETE", cmDefault+"/p", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"`+policy+`"}`)
		if f := get(d, "metadata", "finalizers").([]interface{}); len(f) != 1 || f[0] != fin {
			t.Fatalf("%s: finalizers %v", policy, f)
		}
		e.must(200, "PATCH", cmDefault+"/p", `[{"op":"remove","path":"/metadata/finalizers"}]`, "Content-Type: application/json-patch+json")
		e.must(404, "GET", cmDefault+"/p", "")
	}
	e.must(400, "DELETE", cmDefault+"/x?propagationPolicy=Sideways", "")
}

func TestDeletePreconditions(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	c := e.must(201, "POST", cmDefault, cmBody("c", ""))
	uid, rv := str(c, "metadata", "uid"), str(c, "metadata", "resourceVersion")
	st := e.must(409, "DELETE", cmDefault+"/c", `{"preconditions":{"uid":"nope"}}`)
	if !strings.Contains(str(st, "message"), "Precondition failed: UID in precondition: nope") {
		t.Fatalf("uid precondition: %v", st)
	}
	e.must(409, "DELETE", cmDefault+"/c", `{"preconditions":{"resourceVersion":"999"}}`)
	e.must(200, "DELETE", cmDefault+"/c?dryRun=All", "")
	e.must(200, "GET", cmDefault+"/c", "")
	e.must(200, "DELETE", cmDefault+"/c", `{"preconditions":{"uid":"`+uid+`","resourceVersion":"`+rv+`"}}`)
	e.must(404, "DELETE", cmDefault+"/c", "")
}

func TestPodGracefulDeletion(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", podsDefault, podBody("bound", "", "n1"))
	e.must(201, "POST", podsDefault, podBody("loose", "", ""))
	d := e.must(200, "DELETE", podsDefault+"/bound", "")
	if str(d, "kind") != "Pod" || str(d, "metadata", "deletionTimestamp") == "" || get(d, "metadata", "deletionGracePeriodSeconds").(float64) != 30 {
		t.Fatalf("graceful delete: %v", d["metadata"])
	}
	// the graceful deletion bumps the generation once (rest.BeforeDelete)
	if g := get(d, "metadata", "generation"); g != 2.0 {
		t.Fatalf("generation after graceful delete: %v", g)
	}
	d = e.must(200, "DELETE", podsDefault+"/bound?gracePeriodSeconds=5", "")
	if get(d, "metadata", "deletionGracePeriodSeconds").(float64) != 5 || get(d, "metadata", "generation") != 2.0 {
		t.Fatalf("shorter grace: %v", d["metadata"])
	}
	// a status update from the agent keeps the pod
	e.must(200, "PATCH", podsDefault+"/bound/status", `{"status":{"phase":"Running"}}`, "Content-Type: application/merge-patch+json")
	e.must(200, "DELETE", podsDefault+"/bound", `{"gracePeriodSeconds":0}`)
	e.must(404, "GET", podsDefault+"/bound", "")
	e.must(200, "DELETE", podsDefault+"/loose", "")
	e.must(404, "GET", podsDefault+"/loose", "")
}

func TestBindingAndEviction(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", podsDefault, podBody("p", "", ""))
	bind := `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n1"}}`
	st := e.must(201, "POST", podsDefault+"/p/binding", bind)
	if str(st, "status") != "Success" {
		t.Fatalf("binding %v", st)
	}
	p := e.must(200, "GET", podsDefault+"/p", "")
	if str(p, "spec", "nodeName") != "n1" {
		t.Fatalf("nodeName %v", get(p, "spec", "nodeName"))
	}
	again := e.must(409, "POST", podsDefault+"/p/binding", bind)
	if !strings.Contains(str(again, "message"), `already assigned to node "n1"`) {
		t.Fatalf("rebind %v", again)
	}
	e.must(422, "POST", podsDefault+"/p/binding", `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Pod","name":"x"}}`)
	ev := `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"},"deleteOptions":{"gracePeriodSeconds":0}}`
	e.must(201, "POST", podsDefault+"/p/eviction", ev)
	e.must(404, "GET", podsDefault+"/p", "")
	e.must(404, "POST", podsDefault+"/p/eviction", ev)
}

func TestNamespaceDeletion(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.must(201, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t"},"spec":{"finalizers":["kubernetes"]}}`)
	e.must(201, "POST", "/api/v1/namespaces/t/configmaps", cmBody("c", ""))
	d := e.must(200, "DELETE", "/api/v1/namespaces/t", "")
	if str(d, "status", "phase") != "Terminating" || str(d, "metadata", "deletionTimestamp") == "" {
		t.Fatalf("terminating: %v", d)
	}
	st := e.must(403, "POST", "/api/v1/namespaces/t/configmaps", cmBody("d", ""))
	causes, _ := get(st, "details", "causes").([]interface{})
	if !strings.Contains(str(st, "message"), "unable to create new content in namespace t because it is being terminated") ||
		len(causes) != 1 || str(causes[0], "reason") != "NamespaceTerminating" {
		t.Fatalf("create in terminating namespace: %v", st)
	}
	ns := e.must(200, "GET", "/api/v1/namespaces/t", "")
	ns["spec"] = map[string]interface{}{"finalizers": []interface{}{}}
	body := mustJSON(t, ns)
	fin := e.must(200, "PUT", "/api/v1/namespaces/t/finalize", body)
	if str(fin, "metadata", "name") != "t" {
		t.Fatalf("finalize: %v", fin)
	}
	e.must(404, "GET", "/api/v1/namespaces/t", "")
	e.must(403, "DELETE", "/api/v1/namespaces/default", "")
}

func TestDeleteCollection(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", cmDefault, cmBody("a", `,"labels":{"x":"1"}`))
	e.must(201, "POST", cmDefault, cmBody("b", `,"labels":{"x":"1"}`))
	e.must(201, "POST", cmDefault, cmBody("c", ""))
	e.must(200, "DELETE", cmDefault+"?labelSelector=x%3D1", "")
	if n := names(e.must(200, "GET", cmDefault, "")); len(n) != 1 || n[0] != "c" {
		t.Fatalf("left %v", n)
	}
}
