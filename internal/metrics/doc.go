// Package metrics holds what every orch process shares for its Prometheus
// /metrics endpoints: a per-process registry with the Go and process
// collectors (no global default registry), the HTTP handler that writes a
// Gatherer, client-go workqueue metrics under upstream's workqueue_* names
// and a helper that registers a collector once per registry.
package metrics
