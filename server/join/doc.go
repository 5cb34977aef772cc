// Package join serves the two unauthenticated-by-Kubernetes endpoints a new
// node uses to join the cluster, like k3s's supervisor endpoints:
//
//	GET  /cacerts                    the cluster CA PEM (public; the joining
//	                                 host checks its sha256 against the K10
//	                                 token before trusting the server)
//	POST /v1-orch/node-certificate   Authorization: Bearer <join secret>,
//	                                 body {nodeName, csrPEM}; answers
//	                                 {certificatePEM, caPEM} with a client
//	                                 certificate for system:node:<nodeName>
//	                                 in group system:nodes; with the
//	                                 optional servingCSRPEM and nodeIPs
//	                                 also servingCertificatePEM, a kubelet
//	                                 API serving certificate (ServerAuth,
//	                                 SANs <nodeName> and the node IPs)
//
// Three kinds of token are accepted (roles.go): the server token
// (<data-dir>/server/token) opens every endpoint, including
// POST /v1-orch/server-bootstrap, which hands out the cluster CA key; the
// agent token of --agent-token and the bootstrap tokens of `orch token
// create` (Secrets kube-system/bootstrap-token-<id>, checked for expiry and
// the authentication usage at each request) join agents only and get 403
// there.
//
// A node renews its certificates with no token at all: it POSTs to
// /v1-orch/node-certificate presenting its current client certificate
// system:node:<name> and gets new ones for that node only (renewal.go).
//
// The handler is mounted in front of the Kubernetes authentication chain
// (Handler.Wrap). Wrong secrets get 401 with a metav1.Status body and are
// rate limited per client IP and globally; secrets are never logged.
package join
