// Package resource serves resource.k8s.io/v1, the API of Dynamic Resource
// Allocation, as kube-apiserver v1.37 does (pkg/registry/resource):
// DeviceClasses, ResourceSlices and DeviceTaintRules (cluster-scoped; the
// rules with a status subresource), ResourceClaims (namespaced, with
// status; the spec immutable) and ResourceClaimTemplates (the spec
// immutable), with upstream's v1 defaults, the structural part of its
// validation and kubectl's columns; ResourceSlices have the spec.nodeName,
// spec.driver and spec.pool.name field selectors. CEL device selectors
// are checked for presence and length only: compiling them needs the DRA
// CEL environment of k8s.io/dynamic-resource-allocation, which orch does
// not link. Nothing allocates devices: orch's scheduler and agent do not
// implement DRA.
package resource
