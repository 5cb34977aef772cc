package apiserver

import (
	"crypto/sha256"
	"encoding/base64"
	"net"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/openapi"
	"github.com/orch/orch/server/registry"
)

// Discovery documents are built from cfg.Resources on each request: there
// are a few dozen resources, and clients cache discovery.

// allVerbs are the verbs every served resource supports, sorted as upstream lists them.
var allVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// groupPriority orders /apis like kube-aggregator's apiVersionPriorities;
// groups it does not name follow, alphabetically.
var groupPriority = map[string]int{
	"apps": 17800, "events.k8s.io": 17750, "authentication.k8s.io": 17700, "authorization.k8s.io": 17600,
	"autoscaling": 17500, "batch": 17400, "certificates.k8s.io": 17300, "networking.k8s.io": 17200,
	"policy": 17100, "rbac.authorization.k8s.io": 17000, "storage.k8s.io": 16800,
	"admissionregistration.k8s.io": 16700, "apiextensions.k8s.io": 16700, "scheduling.k8s.io": 16600,
	"coordination.k8s.io": 16500, "node.k8s.io": 16300, "discovery.k8s.io": 16200,
	"flowcontrol.apiserver.k8s.io": 16100, "resource.k8s.io": 15900, "storagemigration.k8s.io": 15800,
}

// servedGroups returns the API groups (without the core group) in
// discovery order, each with its versions in the order resources name them.
func servedGroups(resources []*registry.Resource) []metav1.APIGroup {
	var groups []metav1.APIGroup
	idx := map[string]int{}
	seen := map[schema.GroupVersion]bool{}
	for _, r := range resources {
		gv := r.GroupVersion
		if gv.Group == "" || seen[gv] {
			continue
		}
		seen[gv] = true
		i, ok := idx[gv.Group]
		if !ok {
			i = len(groups)
			idx[gv.Group] = i
			groups = append(groups, metav1.APIGroup{Name: gv.Group})
		}
		groups[i].Versions = append(groups[i].Versions, metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version})
	}
	for i := range groups {
		groups[i].PreferredVersion = groups[i].Versions[0]
	}
	sort.SliceStable(groups, func(a, b int) bool {
		pa, pb := groupPriority[groups[a].Name], groupPriority[groups[b].Name]
		if pa != pb {
			return pa > pb
		}
		return groups[a].Name < groups[b].Name
	})
	return groups
}

// findGroup returns the served group named name.
func findGroup(resources []*registry.Resource, name string) (metav1.APIGroup, bool) {
	for _, g := range servedGroups(resources) {
		if g.Name == name {
			return g, true
		}
	}
	return metav1.APIGroup{}, false
}

// apiResources is the APIResourceList content of one group version:
// resources and their subresources, sorted by name.
func apiResources(resources []*registry.Resource, gv schema.GroupVersion) []metav1.APIResource {
	var out []metav1.APIResource
	for _, r := range resources {
		if r.GroupVersion != gv {
			continue
		}
		out = append(out, metav1.APIResource{
			Name: r.Resource, SingularName: r.SingularName, Namespaced: r.Namespaced, Kind: r.Kind,
			Verbs: verbsOf(r), ShortNames: r.ShortNames, Categories: r.Categories,
			StorageVersionHash: storageVersionHash(gv.Group, gv.Version, r.Kind),
		})
		for _, sub := range subresourcesOf(r) {
			out = append(out, metav1.APIResource{
				Name: r.Resource + "/" + sub.Name, Namespaced: r.Namespaced,
				Group: sub.Kind.Group, Version: sub.Kind.Version, Kind: sub.Kind.Kind, Verbs: sub.Verbs,
			})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// subresourcesOf lists the subresources served for r: status, scale and the
// extra ones of openapi.ExtraSubresources. Kind always has group and version.
func subresourcesOf(r *registry.Resource) []openapi.Subresource {
	var subs []openapi.Subresource
	update := []string{"get", "patch", "update"}
	if r.HasStatus {
		subs = append(subs, openapi.Subresource{Name: "status", Kind: r.GroupVersion.WithKind(r.Kind), Verbs: update})
	}
	if r.Scale != nil {
		subs = append(subs, openapi.Subresource{Name: "scale",
			Kind: schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: update})
	}
	for _, e := range openapi.ExtraSubresources() {
		if e.Group == r.GroupVersion.Group && e.Resource == r.Resource {
			subs = append(subs, e)
		}
	}
	for name := range r.Subresources {
		subs = append(subs, openapi.Subresource{Name: name, Kind: r.GroupVersion.WithKind(r.Kind), Verbs: update})
	}
	sort.SliceStable(subs, func(a, b int) bool { return subs[a].Name < subs[b].Name })
	return subs
}

// storageVersionHash is upstream's discovery.StorageVersionHash: the first
// 8 bytes of sha256("group/version/kind"), base64.
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// serverAddresses is APIVersions.serverAddressByClientCIDRs: every client
// reaches the advertised address.
func (s *Server) serverAddresses() []metav1.ServerAddressByClientCIDR {
	if s.cfg.AdvertiseAddress == nil || s.cfg.SecurePort == 0 {
		return nil
	}
	cidr := "0.0.0.0/0"
	if s.cfg.AdvertiseAddress.To4() == nil {
		cidr = "::/0"
	}
	return []metav1.ServerAddressByClientCIDR{{
		ClientCIDR:    cidr,
		ServerAddress: net.JoinHostPort(s.cfg.AdvertiseAddress.String(), strconv.Itoa(s.cfg.SecurePort)),
	}}
}
