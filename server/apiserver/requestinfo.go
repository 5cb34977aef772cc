package apiserver

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/auth"
)

// requestInfo is what a request path and method say, like kube-apiserver's
// request.RequestInfo.
type requestInfo struct {
	IsResource  bool
	Path        string
	Verb        string
	APIPrefix   string // "api" or "apis"
	APIGroup    string
	APIVersion  string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
	// selectedName is the name a list or watch selects with the field
	// selector metadata.name=<name>: authorization sees it as the name,
	// as upstream's RequestInfo does (RBAC resourceNames then cover
	// single-object informers).
	selectedName string
	// fieldSelector is a list's or watch's fieldSelector parameter.
	fieldSelector string
	// extraParts is set when the path has more segments than
	// resource/name/subresource: such paths are not served.
	extraParts bool
	// proxyPath is what follows <name>/proxy (the proxy subresource's
	// backend path, trailing slash kept).
	proxyPath string
}

// namespaceSubresources are the subresources of a namespace object, which
// must not be read as "a resource inside the namespace".
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

var methodVerbs = map[string]string{
	http.MethodGet: "get", http.MethodHead: "get", http.MethodPost: "create",
	http.MethodPut: "update", http.MethodPatch: "patch", http.MethodDelete: "delete",
}

// parseRequestInfo splits a request into the parts authorization and
// routing need. Paths that are not /api/<v>/... or /apis/<g>/<v>/... resource
// paths are non-resource requests with the lower-case method as verb.
func parseRequestInfo(r *http.Request) *requestInfo {
	info := &requestInfo{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	if len(parts) < 3 || (parts[0] != "api" && parts[0] != "apis") {
		return info
	}
	info.APIPrefix, parts = parts[0], parts[1:]
	if info.APIPrefix == "apis" {
		info.APIGroup, parts = parts[0], parts[1:]
		if len(parts) < 2 {
			info.APIGroup = ""
			return info
		}
	}
	info.APIVersion, parts = parts[0], parts[1:]
	verb, ok := methodVerbs[r.Method]
	if !ok {
		verb = strings.ToLower(r.Method)
	}
	watchPath := false
	if parts[0] == "watch" {
		parts, watchPath = parts[1:], true
		if len(parts) == 0 {
			return &requestInfo{Path: info.Path, Verb: info.Verb}
		}
	}
	info.IsResource, info.Verb = true, verb
	if parts[0] == "namespaces" && len(parts) > 1 {
		info.Namespace = parts[1]
		if len(parts) > 2 && !namespaceSubresources[parts[2]] {
			parts = parts[2:]
		}
	}
	info.Resource = parts[0]
	if len(parts) > 1 {
		info.Name = parts[1]
	}
	if len(parts) > 2 {
		info.Subresource = parts[2]
	}
	info.extraParts = len(parts) > 3
	if info.Subresource == "proxy" && info.extraParts {
		info.extraParts = false
		info.proxyPath = "/" + strings.Join(parts[3:], "/")
		if strings.HasSuffix(r.URL.Path, "/") {
			info.proxyPath += "/"
		}
	}
	info.Verb = refineVerb(info, r, watchPath)
	if info.Name == "" && (info.Verb == "list" || info.Verb == "watch") {
		info.selectedName = selectedName(r)
		info.fieldSelector = r.URL.Query().Get("fieldSelector")
	}
	return info
}

// selectedName is the metadata.name a list's field selector requires
// exactly, if it is a valid name.
func selectedName(r *http.Request) string {
	fs := r.URL.Query().Get("fieldSelector")
	if fs == "" {
		return ""
	}
	sel, err := fields.ParseSelector(fs)
	if err != nil {
		return ""
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok || len(path.IsValidPathSegmentName(name)) > 0 {
		return ""
	}
	return name
}

func refineVerb(info *requestInfo, r *http.Request, watchPath bool) string {
	verb := info.Verb
	if info.Name == "" {
		switch verb {
		case "get":
			verb = "list"
		case "delete":
			verb = "deletecollection"
		}
	}
	if verb == "get" || verb == "list" {
		if watchPath || isTrue(r.URL.Query().Get("watch")) {
			verb = "watch"
		}
	}
	return verb
}

func isTrue(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func (i *requestInfo) groupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: i.APIGroup, Version: i.APIVersion, Resource: i.Resource}
}

// attributes turns the request into authorization attributes.
func (i *requestInfo) attributes(u *auth.User) auth.Attributes {
	if !i.IsResource {
		return auth.Attributes{User: u, Verb: i.Verb, Path: i.Path}
	}
	name := i.Name
	if name == "" {
		name = i.selectedName
	}
	return auth.Attributes{
		User: u, Verb: i.Verb, Namespace: i.Namespace, APIGroup: i.APIGroup,
		Resource: i.Resource, Subresource: i.Subresource, Name: name,
		Path: i.Path, IsResource: true, FieldSelector: i.fieldSelector,
	}
}
