package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/all"
)

// apiAuthn maps "Authorization: Bearer <name>" to user <name>; no header is
// no credentials, "Bearer bad" is an invalid token.
type apiAuthn struct{}

func (apiAuthn) AuthenticateRequest(r *http.Request) (*auth.User, bool, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, false, nil
	}
	name := strings.TrimPrefix(h, "Bearer ")
	if name == "bad" {
		return nil, false, io.ErrUnexpectedEOF
	}
	return &auth.User{Name: name}, true, nil
}

// apiAuthz allows everything to "admin", reads to "reader", nothing else.
type apiAuthz struct{}

func (apiAuthz) Authorize(_ context.Context, a auth.Attributes) (bool, string, error) {
	switch a.User.Name {
	case "admin", LoopbackUser:
		return true, "", nil
	case "reader":
		return a.Verb == "get" || a.Verb == "list" || a.Verb == "watch", "", nil
	}
	return false, "", nil
}

type apiEnv struct {
	t     *testing.T
	s     *Server
	store *datastore.MemStore
	srv   *httptest.Server
}

func newAPIEnv(t *testing.T, history int, mutate func(*Config)) *apiEnv {
	t.Helper()
	store := datastore.NewMemStore(history)
	cfg := Config{
		Store: store, Resources: all.Resources(registry.Config{}),
		Authenticator: apiAuthn{}, Authorizer: apiAuthz{}, Logger: zaptest.NewLogger(t),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		_ = store.Close()
	})
	return &apiEnv{t: t, s: s, store: store, srv: srv}
}

type apiResp struct {
	code   int
	header http.Header
	body   []byte
}

func (r apiResp) obj(t *testing.T) map[string]interface{} {
	t.Helper()
	var m map[string]interface{}
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return m
}

// do sends a request as admin; headers are "Key: value" strings.
func (e *apiEnv) do(method, path, body string, headers ...string) apiResp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewBufferString(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer admin")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return apiResp{code: resp.StatusCode, header: resp.Header, body: data}
}

// must sends a request and fails the test unless the code is want.
func (e *apiEnv) must(want int, method, path, body string, headers ...string) map[string]interface{} {
	e.t.Helper()
	r := e.do(method, path, body, headers...)
	if r.code != want {
		e.t.Fatalf("%s %s: got %d want %d: %s", method, path, r.code, want, r.body)
	}
	return r.obj(e.t)
}

func (e *apiEnv) createNamespace(name string) {
	e.t.Helper()
	e.must(201, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+name+`"}}`)
}

// get walks a decoded JSON object: get(m, "metadata", "name").
func get(m interface{}, path ...string) interface{} {
	for _, p := range path {
		mm, ok := m.(map[string]interface{})
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}

func str(m interface{}, path ...string) string {
	s, _ := get(m, path...).(string)
	return s
}

func mustJSON(t *testing.T, v interface{}) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
