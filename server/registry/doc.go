// Package registry defines the resources orch's API server serves and, for
// each, the Strategy with kube-apiserver's rules for that type: defaults,
// validation, create/update preparation, status and scale subresources,
// field selectors, and the columns of server-side printing (kubectl get).
// Everything here is pure logic over k8s.io/api types; the HTTP handling is
// in server/apiserver and storage in datastore.
//
// Entry points: All(Config) returns the resource table, NewScheme() the
// runtime.Scheme with every served group version, DefaultConfig() orch's
// service CIDR, NodePort range and cluster domain.
//
// Layout: strategy.go is the generic Strategy driven by per-type rules
// (resources.go lists the types); each group has its own file (pod*.go,
// service*.go, core_*.go, apps*.go, batch.go, groups.go). The rules are
// ports of k8s.io/kubernetes pkg/apis/*/v1/defaults.go, pkg/apis/*/validation,
// pkg/registry/*/strategy.go and pkg/printers/internalversion/printers.go
// (v1.37), reduced to what orch's users meet.
//
// Contract with the API layer, as upstream's rest.BeforeCreate/BeforeUpdate:
// metadata.name (generated), uid and creationTimestamp are set before
// PrepareForCreate (the Job selector is built from them); the call order is
// Default, PrepareForCreate/PrepareForUpdate, Validate/ValidateUpdate, then
// the Allocator for Services. Pods also serve pods/ephemeralcontainers and
// pods/resize (pod_subresources.go): update subresources whose strategies
// keep everything but the ephemeral containers, or the containers'
// resources and resize policies, and bump the generation. Events print "Last Seen" as their first column
// (as upstream), every other type "Name".
package registry
