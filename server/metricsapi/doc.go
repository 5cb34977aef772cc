// Package metricsapi serves metrics.k8s.io/v1beta1 (NodeMetrics and
// PodMetrics) from orch server itself, so `kubectl top` works without
// installing metrics-server.
//
// Every server runs a Scraper: each Resolution (15 s, metrics-server's
// default) it lists the Ready nodes and reads each agent's kubelet
// /metrics/resource with the API server's kubelet client certificate. A
// Store keeps the last two readings of every node and container (nothing
// older: memory grows with the number of running containers only, and a
// node or pod that disappears is forgotten on the next scrape). Usage is
// computed as metrics-server does: CPU as the rate of the cumulative CPU
// time between the two readings, memory as the last working set, with the
// readings' timestamp and the window between them.
//
// Resources returns the two read-only resources the API server serves
// (get and list, label and metadata field selectors; apiserver.Virtual),
// authorized by RBAC like any other resource. `orch server --disable
// metrics-server` serves neither, so a real metrics-server's APIService can
// take the group.
package metricsapi
