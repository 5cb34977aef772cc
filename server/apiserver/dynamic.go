package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/registry"
)

// DynamicResources are resources that come and go while the server runs:
// the custom resources of Established CRDs (server/crd.Registry).
type DynamicResources interface {
	Lookup(gvr schema.GroupVersionResource) *registry.Resource
	Resources() []*registry.Resource
}

// lookup finds the resource of gvr: a built-in one, else a dynamic one.
func (s *Server) lookup(gvr schema.GroupVersionResource) *registry.Resource {
	if r := s.byGVR[gvr]; r != nil {
		return r
	}
	if s.cfg.Dynamic != nil {
		return s.cfg.Dynamic.Lookup(gvr)
	}
	return nil
}

// allResources is every served resource: built-in, review (virtual) and
// dynamic ones. Built-in resources win over custom ones of the same name.
func (s *Server) allResources() []*registry.Resource {
	if s.cfg.Dynamic == nil {
		return s.resources
	}
	dyn := s.cfg.Dynamic.Resources()
	out := make([]*registry.Resource, 0, len(s.resources)+len(dyn))
	out = append(out, s.resources...)
	for _, r := range dyn {
		if s.byGVR[r.GroupVersion.WithResource(r.Resource)] == nil {
			out = append(out, r)
		}
	}
	return out
}
