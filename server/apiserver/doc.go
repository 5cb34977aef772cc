// Package apiserver serves the Kubernetes REST API over a datastore.Store and
// the resources of server/registry: authentication and authorization of every
// request, then get, list, watch, create, update, patch, delete and
// deletecollection with kube-apiserver's semantics (resourceVersion
// concurrency, selectors, pagination, graceful deletion, finalizers, Table
// output), plus the status, scale, binding, eviction and finalize
// subresources. Discovery, health, version and OpenAPI paths are served by the
// non-resource handlers of the same package.
package apiserver
