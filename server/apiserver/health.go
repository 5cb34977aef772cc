package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// healthCheck is one named check of /healthz, /livez or /readyz.
type healthCheck struct {
	name  string
	check func() error
}

// healthChecks returns the checks of an endpoint ("healthz", "livez",
// "readyz"). Liveness does not depend on the datastore: a server that lost
// its quorum is alive and must not be restarted for it.
func (s *Server) healthChecks(endpoint string) []healthCheck {
	checks := []healthCheck{{name: "ping", check: func() error { return nil }}}
	if endpoint != "livez" {
		checks = append(checks, healthCheck{name: "datastore", check: s.datastoreReady})
	}
	return checks
}

func (s *Server) datastoreReady() error {
	if s.cfg.Ready == nil {
		return nil
	}
	return s.cfg.Ready()
}

// serveHealth answers /healthz, /livez and /readyz like kube-apiserver:
// "ok", or with ?verbose one "[+]name ok" line per check; /readyz/<check>
// runs one check; ?exclude=<check> skips one. A failing check is a 500
// naming the check and its reason.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) error {
	segs := splitPath(r.URL.Path)
	endpoint := segs[0]
	checks := s.healthChecks(endpoint)
	if len(segs) == 2 {
		checks = pickCheck(checks, segs[1])
		if checks == nil {
			return notFoundPath()
		}
	} else if len(segs) > 2 {
		return notFoundPath()
	}
	q := r.URL.Query()
	excluded := map[string]bool{}
	for _, e := range q["exclude"] {
		excluded[e] = true
	}
	var body bytes.Buffer
	failed := false
	for _, c := range checks {
		if excluded[c.name] {
			fmt.Fprintf(&body, "[+]%s excluded: ok\n", c.name)
			continue
		}
		if err := c.check(); err != nil {
			failed = true
			s.log.Info("health check failed", zap.String("endpoint", endpoint), zap.String("check", c.name), zap.Error(err))
			fmt.Fprintf(&body, "[-]%s failed: %v\n", c.name, err)
			continue
		}
		fmt.Fprintf(&body, "[+]%s ok\n", c.name)
	}
	code, out := http.StatusOK, "ok"
	_, verbose := q["verbose"]
	switch {
	case failed:
		code, out = http.StatusInternalServerError, body.String()+endpoint+" check failed\n"
	case verbose:
		out = body.String() + endpoint + " check passed\n"
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(out))
	}
	return nil
}

func pickCheck(checks []healthCheck, name string) []healthCheck {
	for _, c := range checks {
		if strings.EqualFold(c.name, name) {
			return []healthCheck{c}
		}
	}
	return nil
}
