// Package server wires `orch server`: it loads or creates the cluster PKI and
// join token, opens the Raft datastore, builds the API server over it, serves
// HTTPS, runs the leader-only control loops and writes the admin kubeconfig.
// Each piece lives in its own package (internal/pki, datastore,
// server/apiserver, server/registry, server/auth); this package only
// connects them. Run is the entry point.
package server
