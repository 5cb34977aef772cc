// Package metricstest parses Prometheus text exposition in tests and finds
// samples by name and labels.
package metricstest
