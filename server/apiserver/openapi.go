package apiserver

import (
	"errors"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/openapi"
	"github.com/orch/orch/server/registry"
)

// serveOpenAPI answers /openapi/v2 (JSON or protobuf), /openapi/v3 (the
// index of served group versions) and /openapi/v3/<path> from the embedded
// documents of package openapi.
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) error {
	p := strings.TrimSuffix(r.URL.Path, "/")
	name := strings.TrimPrefix(p, "/openapi/v3/")
	var err error
	switch {
	case p == "/openapi/v2":
		err = s.specs.ServeV2With(w, r, s.openapiV2, s.dynamicV2())
	case p == "/openapi/v3":
		var paths map[string]string
		if paths, err = s.OpenAPIV3Paths(); err == nil {
			err = openapi.ServeV3Paths(w, r, paths)
		}
	case s.dynamicDoc(name) != nil:
		err = openapi.ServeDoc(w, r, *s.dynamicDoc(name))
	default:
		err = s.serveV3Doc(w, r, name)
	}
	switch {
	case errors.Is(err, openapi.ErrNotFound):
		return notFoundPath()
	case errors.Is(err, openapi.ErrNotAcceptable):
		return notAcceptable("only application/json is served here (and " + openapi.MediaTypeV2Protobuf + " for /openapi/v2)")
	}
	return err
}

// serveV3Doc serves an embedded v3 document if the index lists it.
func (s *Server) serveV3Doc(w http.ResponseWriter, r *http.Request, name string) error {
	paths, err := s.OpenAPIV3Paths()
	if err != nil {
		return err
	}
	if _, ok := paths[name]; !ok {
		return openapi.ErrNotFound
	}
	return s.specs.ServeV3(w, r, name)
}

// OpenAPIV3Paths is the content of /openapi/v3: the server-relative URL
// (with its hash) of every served v3 document, by name. It is served over
// HTTP and, in process, to MutatingAdmissionPolicy's type converters, which
// poll it every 5 s, so the answer is kept until the custom resources
// change. The map must not be modified.
func (s *Server) OpenAPIV3Paths() (map[string]string, error) {
	var dyn []*registry.Resource
	if s.cfg.Dynamic != nil {
		dyn = s.cfg.Dynamic.Resources()
	}
	docs := s.dynamicDocs()
	m := &s.v3Paths
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.paths != nil && sameSlice(m.dyn, dyn) && sameSlice(m.docs, docs) {
		return m.paths, nil
	}
	paths, err := s.specs.V3Paths(s.openAPIv3Filter(), docs)
	if err != nil {
		return nil, err
	}
	m.dyn, m.docs, m.paths = dyn, docs, paths
	return paths, nil
}

// v3PathsMemo is the last OpenAPIV3Paths answer with the custom resources
// and documents it was made from (the CRD registry replaces those slices
// when a CRD changes; it never changes them in place).
type v3PathsMemo struct {
	mu    sync.Mutex
	dyn   []*registry.Resource
	docs  []openapi.Doc
	paths map[string]string
}

// sameSlice tells whether a and b are the same slice (not equal contents).
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// openAPIv3Filter tells whether a v3 document ("api/v1", "apis/apps",
// "apis/apps/v1", ...) belongs to a group version this server serves now.
// It looks at the served resources once, so that filtering the whole index
// is one pass over them.
func (s *Server) openAPIv3Filter() func(name string) bool {
	gvs, groups := map[schema.GroupVersion]bool{}, map[string]bool{}
	for _, r := range s.allResources() {
		gvs[r.GroupVersion] = true
		if r.GroupVersion.Group != "" {
			groups[r.GroupVersion.Group] = true
		}
	}
	return func(name string) bool {
		segs := strings.Split(name, "/")
		switch {
		case len(segs) == 1:
			return true // "api", "apis", "version"
		case segs[0] == "api" && len(segs) == 2:
			return gvs[schema.GroupVersion{Version: segs[1]}]
		case segs[0] == "apis" && len(segs) == 2:
			return groups[segs[1]]
		case segs[0] == "apis" && len(segs) == 3:
			return segs[1] != "" && gvs[schema.GroupVersion{Group: segs[1], Version: segs[2]}]
		}
		return false
	}
}

// dynamicDocs are the v3 documents of custom resources, if any.
func (s *Server) dynamicDocs() []openapi.Doc {
	if d, ok := s.cfg.Dynamic.(interface{ OpenAPIV3() []openapi.Doc }); ok {
		return d.OpenAPIV3()
	}
	return nil
}

// dynamicV2 is what custom resources add to the v2 document, if any.
func (s *Server) dynamicV2() *openapi.V2Additions {
	if d, ok := s.cfg.Dynamic.(interface{ OpenAPIV2() *openapi.V2Additions }); ok {
		return d.OpenAPIV2()
	}
	return nil
}

// dynamicDoc finds the custom resource document name ("apis/<g>/<v>").
func (s *Server) dynamicDoc(name string) *openapi.Doc {
	for _, d := range s.dynamicDocs() {
		if d.Name == name {
			return &d
		}
	}
	return nil
}
