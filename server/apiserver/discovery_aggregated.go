package apiserver

import (
	"mime"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/registry"
)

// aggregatedMediaType is the Content-Type of aggregated discovery
// (apidiscovery.k8s.io/v2), which client-go asks for first.
const aggregatedMediaType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// wantsAggregated is true when the first usable Accept clause asks for
// APIGroupDiscoveryList v2 (protobuf clauses are skipped: JSON only).
func wantsAggregated(accept string) bool {
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json":
			if params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList" {
				return true
			}
			if params["as"] == "" {
				return false
			}
		case "application/*", "*/*":
			return false
		}
	}
	return false
}

// aggregatedList is the APIGroupDiscoveryList of the core group (legacy=true,
// for /api) or of all named groups (for /apis).
func aggregatedList(resources []*registry.Resource, legacy bool) *apidiscoveryv2.APIGroupDiscoveryList {
	list := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
	if legacy {
		gv := schema.GroupVersion{Version: "v1"}
		list.Items = append(list.Items, apidiscoveryv2.APIGroupDiscovery{
			Versions: []apidiscoveryv2.APIVersionDiscovery{versionDiscovery(resources, gv)},
		})
		return list
	}
	for _, g := range servedGroups(resources) {
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.Name}}
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			item.Versions = append(item.Versions, versionDiscovery(resources, gv))
		}
		list.Items = append(list.Items, item)
	}
	return list
}

func versionDiscovery(resources []*registry.Resource, gv schema.GroupVersion) apidiscoveryv2.APIVersionDiscovery {
	vd := apidiscoveryv2.APIVersionDiscovery{Version: gv.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	for _, r := range resources {
		if r.GroupVersion != gv {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		rd := apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Resource, ResponseKind: &metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: r.Kind},
			Scope: scope, SingularResource: r.SingularName, Verbs: verbsOf(r),
			ShortNames: r.ShortNames, Categories: r.Categories,
		}
		for _, sub := range subresourcesOf(r) {
			k := sub.Kind
			rd.Subresources = append(rd.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  sub.Name,
				ResponseKind: &metav1.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind},
				Verbs:        sub.Verbs,
			})
		}
		vd.Resources = append(vd.Resources, rd)
	}
	sort.SliceStable(vd.Resources, func(a, b int) bool { return vd.Resources[a].Resource < vd.Resources[b].Resource })
	return vd
}
