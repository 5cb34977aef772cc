package apiserver

import (
	"errors"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/openapi"
)

// serveOpenAPI answers /openapi/v2 (JSON or protobuf), /openapi/v3 (the
// index of served group versions) and /openapi/v3/<path> from the embedded
// documents of package openapi.
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) error {
	specs := openapi.New()
	p := strings.TrimSuffix(r.URL.Path, "/")
	var err error
	switch {
	case p == "/openapi/v2":
		err = specs.ServeV2With(w, r, s.openapiV2, s.dynamicV2())
	case p == "/openapi/v3":
		err = specs.ServeV3IndexWith(w, r, s.servesOpenAPIv3, s.dynamicDocs())
	case s.dynamicDoc(strings.TrimPrefix(p, "/openapi/v3/")) != nil:
		err = openapi.ServeDoc(w, r, *s.dynamicDoc(strings.TrimPrefix(p, "/openapi/v3/")))
	case !s.servesOpenAPIv3(strings.TrimPrefix(p, "/openapi/v3/")):
		err = openapi.ErrNotFound
	default:
		err = specs.ServeV3(w, r, strings.TrimPrefix(p, "/openapi/v3/"))
	}
	switch {
	case errors.Is(err, openapi.ErrNotFound):
		return notFoundPath()
	case errors.Is(err, openapi.ErrNotAcceptable):
		return notAcceptable("only application/json is served here (and " + openapi.MediaTypeV2Protobuf + " for /openapi/v2)")
	}
	return err
}

// servesOpenAPIv3 tells whether a v3 document ("api/v1", "apis/apps",
// "apis/apps/v1", ...) belongs to a group version this server serves.
func (s *Server) servesOpenAPIv3(name string) bool {
	segs := strings.Split(name, "/")
	switch {
	case len(segs) == 1:
		return true // "api", "apis", "version"
	case segs[0] == "api" && len(segs) == 2:
		return len(apiResources(s.allResources(), schema.GroupVersion{Version: segs[1]})) > 0
	case segs[0] == "apis" && len(segs) == 2:
		_, ok := findGroup(s.allResources(), segs[1])
		return ok
	case segs[0] == "apis" && len(segs) == 3:
		return len(apiResources(s.allResources(), schema.GroupVersion{Group: segs[1], Version: segs[2]})) > 0
	}
	return false
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
