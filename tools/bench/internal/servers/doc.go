// Package servers starts the two API servers under test on loopback ports:
// orch (`orch server`) and the baseline (kube-apiserver on kine/SQLite).
package servers
