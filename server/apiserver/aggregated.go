package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	for _, res := range s.allResources() {
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

// aggregatedGroups are the groups of non-local APIServices for legacy
// discovery (/apis and /apis/<group>), highest versionPriority first.
func (s *Server) aggregatedGroups(ctx context.Context) []metav1.APIGroup {
	res := findResource(s.cfg.Resources, apiregistration.GroupName, "apiservices")
	if s.cfg.Aggregator == nil || res == nil {
		return nil
	}
	page, err := s.cfg.Store.List(ctx, res.Prefix(""), "", 0)
	if err != nil {
		s.log.Warn("list APIServices for discovery failed")
		return nil
	}
	var services []apiregistration.APIService
	for _, kv := range page.KVs {
		var a apiregistration.APIService
		if json.Unmarshal(kv.Value, &a) == nil && a.Spec.Service != nil {
			services = append(services, a)
		}
	}
	sort.SliceStable(services, func(i, j int) bool { return services[i].Spec.VersionPriority > services[j].Spec.VersionPriority })
	var out []metav1.APIGroup
	index := map[string]int{}
	for _, a := range services {
		gv := metav1.GroupVersionForDiscovery{GroupVersion: a.Spec.Group + "/" + a.Spec.Version, Version: a.Spec.Version}
		i, ok := index[a.Spec.Group]
		if !ok {
			index[a.Spec.Group] = len(out)
			out = append(out, metav1.APIGroup{Name: a.Spec.Group, PreferredVersion: gv})
			i = len(out) - 1
		}
		out[i].Versions = append(out[i].Versions, gv)
	}
	return out
}

func (s *Server) aggregatedGroup(ctx context.Context, name string) (metav1.APIGroup, bool) {
	for _, g := range s.aggregatedGroups(ctx) {
		if g.Name == name {
			return g, true
		}
	}
	return metav1.APIGroup{}, false
}
