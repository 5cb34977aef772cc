package apiserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

type apiWatch struct {
	t    *testing.T
	resp *http.Response
	dec  *json.Decoder
}

func (e *apiEnv) watch(path string, headers ...string) *apiWatch {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer admin")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		e.t.Fatalf("watch %s: %d", path, resp.StatusCode)
	}
	return &apiWatch{t: e.t, resp: resp, dec: json.NewDecoder(resp.Body)}
}

type apiEvent struct {
	Type   string                 `json:"type"`
	Object map[string]interface{} `json:"object"`
}

func (w *apiWatch) next() apiEvent {
	w.t.Helper()
	ch := make(chan apiEvent, 1)
	errc := make(chan error, 1)
	go func() {
		var ev apiEvent
		if err := w.dec.Decode(&ev); err != nil {
			errc <- err
			return
		}
		ch <- ev
	}()
	select {
	case ev := <-ch:
		return ev
	case err := <-errc:
		w.t.Fatalf("watch decode: %v", err)
	case <-time.After(10 * time.Second):
		w.t.Fatal("no watch event within 10s")
	}
	return apiEvent{}
}

// expect reads the next events and checks "TYPE name" of each.
func (w *apiWatch) expect(want ...string) []apiEvent {
	w.t.Helper()
	var evs []apiEvent
	for _, wnt := range want {
		ev := w.next()
		if got := ev.Type + " " + str(ev.Object, "metadata", "name"); got != wnt {
			w.t.Fatalf("event %q want %q (%v)", got, wnt, ev.Object)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestWatch(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", cmDefault, cmBody("old", ""))
	rv := str(e.must(200, "GET", cmDefault, ""), "metadata", "resourceVersion")
	w := e.watch(cmDefault + "?watch=1&resourceVersion=" + rv)
	c := e.must(201, "POST", cmDefault, cmBody("x", ""))
	e.must(200, "PATCH", cmDefault+"/x", `{"data":{"b":"2"}}`, "Content-Type: application/merge-patch+json")
	e.must(200, "DELETE", cmDefault+"/x", "")
	evs := w.expect("ADDED x", "MODIFIED x", "DELETED x")
	if str(evs[0].Object, "metadata", "resourceVersion") != str(c, "metadata", "resourceVersion") || str(evs[0].Object, "kind") != "ConfigMap" {
		t.Fatalf("added object %v", evs[0].Object)
	}
	// resume after the ADDED event replays the rest
	e.watch(cmDefault+"?watch=true&resourceVersion="+str(evs[0].Object, "metadata", "resourceVersion")).expect("MODIFIED x", "DELETED x")
	// resourceVersion 0 and legacy /watch/ path: synthetic ADDED first
	e.watch("/api/v1/watch/namespaces/default/configmaps?resourceVersion=0").expect("ADDED old")
	e.watch(cmDefault + "?watch=1").expect("ADDED old")
	// one object by name through the legacy path
	w1 := e.watch("/api/v1/watch/namespaces/default/configmaps/y")
	e.must(201, "POST", cmDefault, cmBody("z", ""))
	e.must(201, "POST", cmDefault, cmBody("y", ""))
	w1.expect("ADDED y")
}

func TestWatchSelectorTransitions(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	w := e.watch(cmDefault + "?watch=1&labelSelector=app%3Dweb&resourceVersion=" + str(e.must(200, "GET", cmDefault, ""), "metadata", "resourceVersion"))
	e.must(201, "POST", cmDefault, cmBody("s", `,"labels":{"app":"db"}`))
	patch := func(app string) {
		e.must(200, "PATCH", cmDefault+"/s", `{"metadata":{"labels":{"app":"`+app+`"}}}`, "Content-Type: application/merge-patch+json")
	}
	patch("web")
	patch("web2")
	patch("web")
	e.must(200, "PATCH", cmDefault+"/s", `{"data":{"k":"v"}}`, "Content-Type: application/merge-patch+json")
	evs := w.expect("ADDED s", "DELETED s", "ADDED s", "MODIFIED s")
	if str(evs[1].Object, "metadata", "labels", "app") != "web" {
		t.Fatalf("DELETED carries the old object: %v", evs[1].Object)
	}
}

func TestWatchExpired(t *testing.T) {
	e := newAPIEnv(t, 2, nil)
	e.createNamespace("default")
	for i := 0; i < 6; i++ {
		e.must(201, "POST", cmDefault, cmBody("c"+string(rune('a'+i)), ""))
	}
	ev := e.watch(cmDefault + "?watch=1&resourceVersion=1").next()
	if ev.Type != "ERROR" || get(ev.Object, "code").(float64) != 410 || str(ev.Object, "reason") != "Expired" ||
		!strings.Contains(str(ev.Object, "message"), "too old resource version") {
		t.Fatalf("expired event %v", ev)
	}
}

func TestWatchListAndBookmarks(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", cmDefault, cmBody("a", ""))
	e.must(201, "POST", cmDefault, cmBody("b", ""))
	w := e.watch(cmDefault + "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	w.expect("ADDED a", "ADDED b")
	bm := w.next()
	if bm.Type != "BOOKMARK" || str(bm.Object, "metadata", "annotations", "k8s.io/initial-events-end") != "true" ||
		str(bm.Object, "metadata", "resourceVersion") == "" {
		t.Fatalf("bookmark %v", bm)
	}
	e.must(400, "GET", cmDefault+"?watch=1&sendInitialEvents=true", "")
}

func TestWatchTimeoutAndTable(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	e.must(201, "POST", cmDefault, cmBody("a", ""))
	w := e.watch(cmDefault+"?watch=1&timeoutSeconds=1", "Accept: application/json;as=Table;v=v1;g=meta.k8s.io")
	first := w.next()
	if first.Type != "ADDED" || str(first.Object, "kind") != "Table" || get(first.Object, "columnDefinitions") == nil {
		t.Fatalf("first table event %v", first)
	}
	e.must(201, "POST", cmDefault, cmBody("b", ""))
	second := w.next()
	if get(second.Object, "columnDefinitions") != nil || len(get(second.Object, "rows").([]interface{})) != 1 {
		t.Fatalf("second table event %v", second)
	}
	var ev apiEvent
	if err := w.dec.Decode(&ev); err == nil {
		t.Fatalf("stream did not end at timeout: %v", ev)
	}
}
