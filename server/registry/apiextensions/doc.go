// Package apiextensions serves apiextensions.k8s.io/v1
// CustomResourceDefinition: upstream's v1 defaults, the validation users
// meet (names, versions, scope, structural schemas via
// k8s.io/apiextensions-apiserver/pkg/apiserver/schema, printer columns,
// subresources), and the cleanup finalizer every CRD carries. Serving the
// custom resources themselves is server/crd's.
package apiextensions
