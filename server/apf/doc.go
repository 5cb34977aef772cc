// Package apf is orch's part of API Priority and Fairness: it classifies
// every request to the FlowSchema that matches it first (by
// matchingPrecedence, then name; subjects, resource and non-resource rules
// as upstream's k8s.io/apiserver/pkg/util/flowcontrol matches them) and the
// PriorityLevelConfiguration it names, reported in the response headers
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID,
// and publishes each level's nominal concurrency limit
// (apiserver_flowcontrol_nominal_limit_seats on /metrics, out of a server
// limit of 600 seats as kube-apiserver's defaults give). It does not queue
// or reject: requests are classified, not throttled.
//
// Ensure keeps the bootstrap configuration kube-apiserver keeps
// (k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap): the mandatory objects
// always, the suggested ones unless their apf.kubernetes.io/autoupdate-spec
// annotation is "false"; objects that annotation marks as managed but that
// are no longer bootstrap objects are removed. The FlowSchemas' Dangling
// condition is kept by server/controllers/apfstatus.
package apf
