package apiserver

import (
	"context"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// VirtualReader serves get and list of a resource computed at request time
// and never stored (metrics.k8s.io's NodeMetrics and PodMetrics). namespace
// is "" for cluster-scoped resources and for a list across namespaces.
type VirtualReader interface {
	// Get returns one object or a NotFound StatusError.
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
	// List returns the objects matching both selectors.
	List(ctx context.Context, namespace string, label labels.Selector, field fields.Selector) ([]runtime.Object, error)
}

// routeVirtualRead serves get and list of a read-only virtual resource (no
// watch, as metrics-server); the output is JSON, YAML or Table.
func (s *Server) routeVirtualRead(rc *reqCtx, read VirtualReader) (resourceHandler, error) {
	verb := rc.info.Verb
	if rc.info.Subresource != "" || !slices.Contains(rc.res.Verbs, verb) || (verb != "get" && verb != "list") {
		return nil, apierrors.NewMethodNotSupported(rc.gr, verb)
	}
	if verb == "get" {
		return func(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
			obj, err := read.Get(r.Context(), rc.ns, rc.name)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			setTypeMeta(rc.res, obj)
			s.noProtobufUnlessKnown(rc, obj)
			s.writeObject(w, r, rc, http.StatusOK, obj)
		}, nil
	}
	return func(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
		opts, err := s.parseListOptions(rc)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		items, err := read.List(r.Context(), rc.ns, opts.label, opts.field)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.transformList(rc, items, metav1.ListMeta{})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if o, ok := out.(runtime.Object); ok {
			s.noProtobufUnlessKnown(rc, o)
		}
		s.writeNegotiated(w, r, rc, http.StatusOK, out)
	}, nil
}

// noProtobufUnlessKnown answers JSON when the scheme cannot encode obj as
// protobuf (types of groups served only as virtual resources).
func (s *Server) noProtobufUnlessKnown(rc *reqCtx, obj runtime.Object) {
	if !rc.out.proto {
		return
	}
	if _, _, err := s.scheme.ObjectKinds(obj); err != nil {
		rc.out.proto = false
	}
}
