package apiserver

import (
	"context"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/registry"
)

// VirtualCreate answers a create of a resource that is never stored (the
// review APIs: TokenReview, SubjectAccessReview, SelfSubjectReview, …):
// it gets the decoded object and returns the object with its status.
type VirtualCreate func(ctx context.Context, obj runtime.Object) (runtime.Object, error)

// Virtual is a resource that is never stored and its handler: create-only
// (Create) or read-only (Read).
type Virtual struct {
	Resource *registry.Resource // must set Verbs: []string{"create"} or {"get", "list"}
	Create   VirtualCreate
	Read     VirtualReader
}

// verbsOf is the discovery verbs of r.
func verbsOf(r *registry.Resource) metav1.Verbs {
	if r.Verbs != nil {
		return r.Verbs
	}
	return allVerbs
}

// routeVirtual serves the verbs of a resource with a Verbs list: only a
// create of the collection, handled by its VirtualCreate.
func (s *Server) routeVirtual(rc *reqCtx) (resourceHandler, error) {
	v := s.virtual[rc.res.GroupVersion.WithResource(rc.res.Resource)]
	if v.Read != nil {
		return s.routeVirtualRead(rc, v.Read)
	}
	create := v.Create
	if rc.info.Verb != "create" || rc.info.Subresource != "" || rc.name != "" || create == nil ||
		!slices.Contains(rc.res.Verbs, "create") {
		return nil, apierrors.NewMethodNotSupported(rc.gr, rc.info.Verb)
	}
	return func(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
		// Reviews have no Table or metadata form: upstream answers 406.
		if o, err := negotiateOutput(r, false, true); err != nil || o.kind != outObject {
			s.writeError(w, r, notAcceptable("only application/json and application/yaml are accepted for "+rc.gr.String()))
			return
		}
		obj, err := s.decodeRequest(w, r, rc, rc.res.GroupVersion.WithKind(rc.res.Kind))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if rc.res.Namespaced {
			if err := matchNamespace(rc, objectMeta(obj)); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		out, err := create(r.Context(), obj)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		setTypeMeta(rc.res, out)
		s.writeJSON(w, r, http.StatusCreated, out)
	}, nil
}

// virtualIndex indexes the virtual resources by group, version and resource.
func virtualIndex(vs []Virtual) map[schema.GroupVersionResource]Virtual {
	m := make(map[schema.GroupVersionResource]Virtual, len(vs))
	for _, v := range vs {
		m[v.Resource.GroupVersion.WithResource(v.Resource.Resource)] = v
	}
	return m
}
