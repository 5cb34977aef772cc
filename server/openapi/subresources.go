package openapi

import "k8s.io/apimachinery/pkg/runtime/schema"

// Subresource is a subresource the API server serves beyond <resource>/status
// and <resource>/scale (those follow registry.Resource.HasStatus and .Scale).
type Subresource struct {
	Group    string // group of the parent resource ("" = core)
	Resource string // parent resource, e.g. "pods"
	Name     string // e.g. "eviction"
	// Kind is the kind the subresource takes and returns, with its group and version.
	Kind  schema.GroupVersionKind
	Verbs []string
}

// ExtraSubresources lists the subresources listed in discovery and kept in
// the OpenAPI documents in addition to status and scale.
func ExtraSubresources() []Subresource {
	core := func(kind string) schema.GroupVersionKind { return schema.GroupVersionKind{Version: "v1", Kind: kind} }
	createGet := []string{"create", "get"}
	return []Subresource{
		{Resource: "pods", Name: "attach", Kind: core("PodAttachOptions"), Verbs: createGet},
		{Resource: "pods", Name: "binding", Kind: core("Binding"), Verbs: []string{"create"}},
		{Resource: "pods", Name: "eviction", Kind: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"},
			Verbs: []string{"create"}},
		{Resource: "pods", Name: "exec", Kind: core("PodExecOptions"), Verbs: createGet},
		{Resource: "pods", Name: "log", Kind: core("Pod"), Verbs: []string{"get"}},
		{Resource: "pods", Name: "portforward", Kind: core("PodPortForwardOptions"), Verbs: createGet},
		{Resource: "pods", Name: "proxy", Kind: core("PodProxyOptions"), Verbs: []string{"create", "delete", "get", "patch", "update"}},
		{Resource: "services", Name: "proxy", Kind: core("ServiceProxyOptions"), Verbs: []string{"create", "delete", "get", "patch", "update"}},
		{Resource: "nodes", Name: "proxy", Kind: core("NodeProxyOptions"), Verbs: []string{"create", "delete", "get", "patch", "update"}},
		{Resource: "namespaces", Name: "finalize", Kind: core("Namespace"), Verbs: []string{"update"}},
		{Resource: "serviceaccounts", Name: "token", Kind: schema.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest"},
			Verbs: []string{"create"}},
	}
}
