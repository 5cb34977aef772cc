package apiserver

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestHealth(t *testing.T) {
	var ready error
	s, _ := newMetaTestServer(t, func(c *Config) { c.Ready = func() error { return ready } })
	tests := []struct {
		path     string
		ready    error
		code     int
		contains string
	}{
		{"/healthz", nil, 200, "ok"},
		{"/livez", nil, 200, "ok"},
		{"/readyz", nil, 200, "ok"},
		{"/readyz?verbose", nil, 200, "[+]ping ok\n[+]datastore ok\nreadyz check passed"},
		{"/readyz", errors.New("no raft leader"), 500, "[-]datastore failed: no raft leader"},
		{"/healthz", errors.New("no raft leader"), 500, "healthz check failed"},
		{"/livez", errors.New("no raft leader"), 200, "ok"},
		{"/readyz/ping", errors.New("no raft leader"), 200, "ok"},
		{"/readyz?exclude=datastore", errors.New("no raft leader"), 200, "ok"},
		{"/readyz/nope", nil, 404, "could not find"},
	}
	for _, tt := range tests {
		ready = tt.ready
		rec := metaGet(t, s, tt.path, "")
		if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.contains) {
			t.Errorf("%s (ready=%v): %d %q", tt.path, tt.ready, rec.Code, rec.Body.String())
		}
	}
	ready = nil
	if rec := metaGet(t, s, "/readyz", ""); rec.Body.String() != "ok" || rec.Code != http.StatusOK {
		t.Errorf("readyz body %q", rec.Body.String())
	}
}
