package apiserver

import (
	"context"
	"net/http"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/registry"
)

// reqCtx is one resource request after routing.
type reqCtx struct {
	res   *registry.Resource
	info  *requestInfo
	gr    schema.GroupResource
	ns    string // namespace of the object; "" for cluster-scoped resources
	name  string
	query url.Values
	out   output
	// warn adds a Warning header to the response (admission warnings).
	warn func(msg string)
	// userAgent names the default field manager; applying marks a
	// server-side apply, whose managedFields the apply itself keeps.
	userAgent string
	applying  bool
}

type resourceHandler func(http.ResponseWriter, *http.Request, *reqCtx)

// serveResource routes /api/v1/... and /apis/<g>/<v>/... resource requests.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, info *requestInfo) {
	res := s.lookup(info.groupVersionResource())
	if res == nil || info.extraParts {
		s.writeError(w, r, notFoundPath())
		return
	}
	rc := &reqCtx{res: res, info: info, gr: groupResource(res), name: info.Name, query: r.URL.Query(),
		warn: func(msg string) { addWarning(w, msg) }, userAgent: r.UserAgent()}
	if res.Namespaced {
		rc.ns = info.Namespace
		if rc.ns == "" && info.Name != "" {
			s.writeError(w, r, notFoundPath())
			return
		}
	} else if info.Namespace != "" && res != s.namespaces {
		s.writeError(w, r, notFoundPath())
		return
	}
	// Watch events carry single objects; a proxied backend chooses its own media types.
	out, err := negotiateOutput(r, info.Verb == "list", hasProtobuf(res))
	if err != nil && info.Subresource != "proxy" {
		s.writeError(w, r, err)
		return
	}
	rc.out = out
	h, err := s.route(rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if d, err := time.ParseDuration(rc.query.Get("timeout")); err == nil && d > 0 && info.Verb != "watch" {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		r = r.WithContext(ctx)
	}
	h(w, r, rc)
}

// route picks the handler of a verb and subresource.
func (s *Server) route(rc *reqCtx) (resourceHandler, error) {
	verb, sub := rc.info.Verb, rc.info.Subresource
	var h resourceHandler
	switch {
	case rc.res.Verbs != nil:
		return s.routeVirtual(rc)
	case sub == "":
		h = map[string]resourceHandler{
			"get": s.handleGet, "list": s.handleList, "watch": s.handleWatch,
			"create": s.handleCreate, "update": s.handleUpdate, "patch": s.handlePatch,
			"delete": s.handleDelete, "deletecollection": s.handleDeleteCollection,
		}[verb]
		if rc.name != "" && verb == "create" || rc.name == "" && (verb == "update" || verb == "patch") {
			h = nil
		}
	case sub == "status" && rc.res.HasStatus:
		h = map[string]resourceHandler{"get": s.handleGet, "update": s.handleUpdate, "patch": s.handlePatch}[verb]
	case rc.res.Subresources[sub] != nil:
		h = map[string]resourceHandler{"get": s.handleGet, "update": s.handleUpdate, "patch": s.handlePatch}[verb]
	case sub == "scale" && rc.res.Scale != nil:
		h = map[string]resourceHandler{"get": s.handleScaleGet, "update": s.handleScaleUpdate, "patch": s.handleScalePatch}[verb]
	case sub == "binding" && rc.gr == podsGR:
		h = map[string]resourceHandler{"create": s.handleBinding}[verb]
	case sub == "eviction" && rc.gr == podsGR:
		h = map[string]resourceHandler{"create": s.handleEviction}[verb]
	case podProxySubresources[sub] && rc.gr == podsGR:
		h = s.podProxyRoute(sub, verb)
	case sub == "proxy" && rc.gr == podsGR:
		h = s.handlePodProxy
	case sub == "proxy" && rc.gr == servicesGR:
		h = s.handleServiceProxy
	case sub == "proxy" && rc.gr == nodesGR:
		h = s.handleNodeProxy
	case sub == "token" && rc.gr == serviceAccountsGR:
		h = map[string]resourceHandler{"create": s.handleTokenRequest}[verb]
	case sub == "finalize" && rc.res == s.namespaces && s.namespaces != nil:
		h = map[string]resourceHandler{"update": s.handleFinalize}[verb]
	default:
		return nil, notFoundPath()
	}
	if h == nil {
		return nil, apierrors.NewMethodNotSupported(rc.gr, verb)
	}
	return h, nil
}

var podsGR = schema.GroupResource{Resource: "pods"}
