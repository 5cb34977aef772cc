package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// listOptions are the query parameters of list and watch.
type listOptions struct {
	label           labels.Selector
	field           fields.Selector
	limit           int64
	cont            *continueToken
	resourceVersion string
	rvMatch         string
	// watch only
	bookmarks         bool
	sendInitialEvents *bool
	timeoutSeconds    int64
}

// parseListOptions reads and checks the list/watch query parameters. Field
// selectors may only name fields the strategy supports, as upstream.
func (s *Server) parseListOptions(rc *reqCtx) (*listOptions, error) {
	q := rc.query
	o := &listOptions{resourceVersion: q.Get("resourceVersion"), rvMatch: q.Get("resourceVersionMatch"),
		bookmarks: isTrue(q.Get("allowWatchBookmarks"))}
	var err error
	if o.label, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return nil, badRequestf("unable to parse labelSelector %q: %v", q.Get("labelSelector"), err)
	}
	if o.field, err = s.parseFieldSelector(rc, q.Get("fieldSelector")); err != nil {
		return nil, err
	}
	if o.limit, err = parseNonNegative(q.Get("limit"), "limit"); err != nil {
		return nil, err
	}
	if o.timeoutSeconds, err = parseNonNegative(q.Get("timeoutSeconds"), "timeoutSeconds"); err != nil {
		return nil, err
	}
	if c := q.Get("continue"); c != "" {
		if o.cont, err = decodeContinue(c); err != nil {
			return nil, err
		}
		if o.resourceVersion != "" && o.resourceVersion != "0" {
			return nil, badRequestf("specifying resource version is not allowed when using continue")
		}
	}
	if v := q.Get("sendInitialEvents"); v != "" {
		b := isTrue(v)
		o.sendInitialEvents = &b
	}
	switch o.rvMatch {
	case "", "NotOlderThan", "Exact":
	default:
		return nil, badRequestf("resourceVersionMatch: unsupported value %q (must be NotOlderThan or Exact)", o.rvMatch)
	}
	if _, err := parseRV(o.resourceVersion); err != nil {
		return nil, err
	}
	return o, nil
}

func (s *Server) parseFieldSelector(rc *reqCtx, raw string) (fields.Selector, error) {
	sel, err := fields.ParseSelector(raw)
	if err != nil {
		return nil, badRequestf("unable to parse fieldSelector %q: %v", raw, err)
	}
	supported := rc.res.Strategy.Fields(rc.res.New())
	for _, req := range sel.Requirements() {
		if _, ok := supported[req.Field]; !ok && req.Field != "metadata.name" && req.Field != "metadata.namespace" {
			return nil, badRequestf("field label not supported: %s", req.Field)
		}
	}
	if rc.name != "" { // watch of one object: /watch/.../<name>
		sel = fields.AndSelectors(sel, fields.OneTermEqualSelector("metadata.name", rc.name))
	}
	return sel, nil
}

func parseNonNegative(v, name string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequestf("%s: invalid value %q: must be a non-negative integer", name, v)
	}
	return n, nil
}

// matches applies the label and field selectors to obj.
func (o *listOptions) matches(rc *reqCtx, obj runtime.Object) bool {
	m := objectMeta(obj)
	if !o.label.Empty() && !o.label.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	if o.field.Empty() {
		return true
	}
	set := rc.res.Strategy.Fields(obj)
	if set == nil {
		set = fields.Set{}
	}
	set["metadata.name"] = m.GetName()
	if rc.res.Namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	return o.field.Matches(set)
}

// continueToken is the opaque continue value: where the next page starts
// (relative to the list prefix), the revision of the first page and how
// many items came before.
type continueToken struct {
	Version string `json:"v"`
	RV      int64  `json:"rv"`
	Start   string `json:"start"`
	Offset  int64  `json:"off"`
}

const continueVersion = "orch.v1"

func encodeContinue(t continueToken) string {
	t.Version = continueVersion
	data, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeContinue(s string) (*continueToken, error) {
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, badRequestf("continue key is not valid: %v", err)
	}
	var t continueToken
	if err := json.Unmarshal(data, &t); err != nil || t.Version != continueVersion || t.RV < -1 || t.Offset < 0 {
		return nil, badRequestf("continue key is not valid: not a token this server issued")
	}
	return &t, nil
}
