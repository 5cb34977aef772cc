// Package load is the client-go load generator: concurrent ConfigMap creates
// (throughput and latency) and watch event delivery latency over many watchers.
// The same code drives orch and the baseline kube-apiserver.
package load
