// Package flowcontrol serves flowcontrol.apiserver.k8s.io/v1 FlowSchema and
// PriorityLevelConfiguration as kube-apiserver does
// (pkg/registry/flowcontrol): cluster-scoped, with a status subresource
// (the spec, generation and metadata are kept on status writes, the status
// on spec writes), upstream's v1 defaults (matchingPrecedence 1000,
// nominalConcurrencyShares 30, queuing 64/8/50) and validation
// (pkg/apis/flowcontrol/validation, including the fixed specs of the
// mandatory "exempt" and "catch-all" objects) and kubectl's columns.
//
// The objects themselves are the configuration of server/apf, which
// classifies every request to a FlowSchema and keeps the bootstrap
// objects and the FlowSchemas' Dangling condition.
package flowcontrol
