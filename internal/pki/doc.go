// Package pki creates and loads orch's TLS material: a cluster CA, the API
// serving certificate, the Raft peer certificate, the admin client
// certificate, admin kubeconfig files and the cluster join token.
//
// Everything lives under one directory (<data-dir>/server/tls) and is
// created on first start and reused afterwards. Leaf certificates are
// re-issued when their wanted subject alternative names change or when they
// are close to expiry, at start and, while the server runs, by KeepRenewed
// (renew.go: the TLS configurations read the current certificate at each
// handshake); Rotate re-issues them on a stopped server's directory; the CA never changes once created. Keys are ECDSA
// P-256 and written with mode 0600. The package holds no global state.
package pki
