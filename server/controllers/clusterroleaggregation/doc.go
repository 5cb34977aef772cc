// Package clusterroleaggregation is the ClusterRole aggregation controller:
// a ClusterRole with an aggregationRule gets, as its rules, the union of the
// rules of every ClusterRole its selectors match (upstream's
// clusterrole-aggregation controller). It is level-based: any ClusterRole
// change re-syncs every aggregated role.
package clusterroleaggregation
