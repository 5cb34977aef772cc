package apiserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry/apiregistration"
)

// Aggregator serves requests of a group/version registered by a non-local
// APIService (server/aggregator.Proxy).
type Aggregator interface {
	Serve(w http.ResponseWriter, r *http.Request, a *apiregistration.APIService)
}

// serveAggregated proxies an authorized request under /apis/<group>/<version>
// that no local resource serves and a non-local APIService registers.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Aggregator == nil {
		return false
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/apis/"), "/", 3)
	if !strings.HasPrefix(r.URL.Path, "/apis/") || len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return false
	}
	group, version := parts[0], parts[1]
	for _, res := range s.cfg.Resources {
		if res.GroupVersion.Group == group && res.GroupVersion.Version == version {
			return false
		}
	}
	res := findResource(s.cfg.Resources, apiregistration.GroupName, "apiservices")
	if res == nil {
		return false
	}
	kv, err := s.cfg.Store.Get(r.Context(), res.Key("", version+"."+group))
	if errors.Is(err, datastore.ErrNotFound) {
		return false
	}
	var a apiregistration.APIService
	if err == nil {
		err = json.Unmarshal(kv.Value, &a)
	}
	if err != nil {
		s.log.Warn("read APIService failed")
		return false
	}
	if a.Spec.Service == nil {
		return false
	}
	s.cfg.Aggregator.Serve(w, r, &a)
	return true
}
