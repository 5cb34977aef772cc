// Package apiregistration serves apiregistration.k8s.io/v1 APIService, the
// registration of an API group/version either served locally ("Local",
// spec.service nil) or by an extension API server behind a Service. The Go
// types mirror k8s.io/kube-aggregator's JSON exactly (the module is not a
// dependency); validation and printing follow upstream.
package apiregistration
