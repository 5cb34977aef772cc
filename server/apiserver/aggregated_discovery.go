package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/server/registry/apiregistration"
)

// aggregatedDiscovery adds the groups of available non-local APIServices to
// an aggregated discovery list, their resources read from each backend's
// /apis/<group>/<version> through the Aggregator (bounded by 3 s; a backend
// that does not answer is listed Stale without resources).
func (s *Server) aggregatedDiscovery(r *http.Request, list *apidiscoveryv2.APIGroupDiscoveryList) {
	for _, g := range s.aggregatedGroups(r.Context()) {
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.Name}}
		for _, v := range g.Versions {
			item.Versions = append(item.Versions, s.fetchVersionDiscovery(r, g.Name, v.Version))
		}
		list.Items = append(list.Items, item)
	}
}

func (s *Server) fetchVersionDiscovery(r *http.Request, group, version string) apidiscoveryv2.APIVersionDiscovery {
	vd := apidiscoveryv2.APIVersionDiscovery{Version: version, Freshness: apidiscoveryv2.DiscoveryFreshnessStale}
	var a apiregistration.APIService
	kv, err := s.cfg.Store.Get(r.Context(), findResource(s.cfg.Resources, apiregistration.GroupName, "apiservices").Key("", version+"."+group))
	if err != nil || json.Unmarshal(kv.Value, &a) != nil || apiregistration.AvailableCell(&a) != "True" {
		return vd
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/apis/"+group+"/"+version, nil)
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	s.cfg.Aggregator.Serve(rec, req, &a)
	var rl metav1.APIResourceList
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &rl) != nil {
		return vd
	}
	vd.Freshness = apidiscoveryv2.DiscoveryFreshnessCurrent
	for _, res := range rl.APIResources {
		if strings.Contains(res.Name, "/") {
			continue // subresources are not listed by this simple merge
		}
		scope := apidiscoveryv2.ScopeCluster
		if res.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		vd.Resources = append(vd.Resources, apidiscoveryv2.APIResourceDiscovery{Resource: res.Name, Scope: scope,
			SingularResource: res.SingularName, Verbs: res.Verbs, ShortNames: res.ShortNames,
			ResponseKind: &metav1.GroupVersionKind{Group: group, Version: version, Kind: res.Kind}})
	}
	return vd
}
