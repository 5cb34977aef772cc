package main

import (
	"strings"

	"github.com/orch/orch/server/openapi"
	"github.com/orch/orch/server/registry"
)

// served is what orch serves, in the terms of OpenAPI paths.
type served struct {
	groups map[string]bool            // API groups ("" = core)
	gvs    map[string]bool            // "v1", "apps/v1"
	subs   map[string]map[string]bool // "apps/v1/deployments" -> subresources ("" = the resource itself)
}

func newServed(resources []*registry.Resource, extra []openapi.Subresource) *served {
	s := &served{groups: map[string]bool{}, gvs: map[string]bool{}, subs: map[string]map[string]bool{}}
	for _, r := range resources {
		gv := r.GroupVersion.String()
		s.groups[r.GroupVersion.Group] = true
		s.gvs[gv] = true
		set := map[string]bool{"": true}
		if r.HasStatus {
			set["status"] = true
		}
		if r.Scale != nil {
			set["scale"] = true
		}
		for _, e := range extra {
			if e.Group == r.GroupVersion.Group && e.Resource == r.Resource {
				set[e.Name] = true
			}
		}
		for name := range r.Subresources {
			set[name] = true
		}
		s.subs[gv+"/"+r.Resource] = set
	}
	return s
}

// apiPath is an OpenAPI path split into its Kubernetes parts.
type apiPath struct {
	group, gv   string // gv is "" for paths above a group version
	resource    string // "" for discovery paths
	subresource string
	other       bool // neither a discovery nor a resource path (e.g. /version, /logs)
}

// parsePath splits paths such as /apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}.
func parsePath(p string) apiPath {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	var rest []string
	var ap apiPath
	switch {
	case segs[0] == "api" && len(segs) == 1, segs[0] == "apis" && len(segs) == 1:
		return ap
	case segs[0] == "api":
		ap.gv, rest = segs[1], segs[2:]
	case segs[0] == "apis" && len(segs) == 2:
		ap.group = segs[1]
		return ap
	case segs[0] == "apis":
		ap.group, ap.gv, rest = segs[1], segs[1]+"/"+segs[2], segs[3:]
	default:
		ap.other = true
		return ap
	}
	if len(rest) > 0 && rest[0] == "watch" {
		rest = rest[1:]
	}
	if len(rest) >= 3 && rest[0] == "namespaces" && rest[1] == "{namespace}" {
		rest = rest[2:]
	}
	if len(rest) > 0 {
		ap.resource = rest[0]
	}
	if len(rest) > 2 {
		ap.subresource = rest[2]
	}
	return ap
}

// keepPath tells whether an OpenAPI path belongs to what orch serves.
func (s *served) keepPath(p string) bool {
	ap := parsePath(p)
	switch {
	case ap.other:
		return strings.Trim(p, "/") == "version"
	case ap.gv == "":
		return s.groups[ap.group]
	case ap.resource == "":
		return s.gvs[ap.gv]
	}
	return s.subs[ap.gv+"/"+ap.resource][ap.subresource]
}

// keepV3 tells whether a v3 document (named by its discovery path such as
// "apis/apps/v1") is served.
func (s *served) keepV3(name string) bool {
	switch name {
	case "api", "apis", "version":
		return true
	}
	segs := strings.Split(name, "/")
	switch {
	case segs[0] == "api" && len(segs) == 2:
		return s.gvs[segs[1]]
	case segs[0] == "apis" && len(segs) == 2:
		return s.groups[segs[1]] && segs[1] != ""
	case segs[0] == "apis" && len(segs) == 3:
		return s.gvs[segs[1]+"/"+segs[2]]
	}
	return false
}

// prunedSections are the sections whose entries are kept only when referenced.
var prunedSections = [][]string{
	{"definitions"}, {"parameters"}, {"responses"},
	{"components", "schemas"}, {"components", "parameters"}, {"components", "responses"},
	{"components", "requestBodies"},
}

// prune drops the paths keepPath rejects and every section entry no kept
// path references, directly or through other entries.
func prune(doc map[string]any, keepPath func(string) bool) {
	if paths, ok := doc["paths"].(map[string]any); ok {
		for p := range paths {
			if !keepPath(p) {
				delete(paths, p)
			}
		}
	}
	orig := map[string]map[string]any{}
	for _, sec := range prunedSections {
		parent, m := lookupSection(doc, sec)
		if m == nil {
			continue
		}
		key := strings.Join(sec, "/")
		orig[key] = m
		parent[sec[len(sec)-1]] = map[string]any{}
	}
	queue := collectRefs(doc, nil)
	for len(queue) > 0 {
		ref := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		i := strings.LastIndex(ref, "/")
		if !strings.HasPrefix(ref, "#/") || i < 2 {
			continue
		}
		secKey, name := ref[2:i], unescapePointer(ref[i+1:])
		src, ok := orig[secKey]
		if !ok {
			continue
		}
		_, dst := lookupSection(doc, strings.Split(secKey, "/"))
		if _, done := dst[name]; done || src[name] == nil {
			continue
		}
		dst[name] = src[name]
		queue = collectRefs(src[name], queue)
	}
}

func lookupSection(doc map[string]any, sec []string) (parent, m map[string]any) {
	cur := doc
	for i, k := range sec {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, nil
		}
		if i == len(sec)-1 {
			return cur, next
		}
		cur = next
	}
	return nil, nil
}

func collectRefs(v any, out []string) []string {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok && k == "$ref" {
				out = append(out, s)
				continue
			}
			out = collectRefs(e, out)
		}
	case []any:
		for _, e := range t {
			out = collectRefs(e, out)
		}
	}
	return out
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
