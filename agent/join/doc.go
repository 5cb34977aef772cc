// Package join is the node side of joining a cluster: it pins the cluster CA
// with the sha256 in the K10 join token, asks the server for a node client
// certificate (system:node:<name>, group system:nodes) with the token's
// secret, and keeps ca.crt, node.crt, node.key and a kubeconfig in a
// directory so that a restarted agent reuses them. In the same request it
// gets a serving certificate for the node's kubelet API (serving.crt and
// serving.key: ServerAuth, SANs <node name> and Options.NodeIPs), which is
// replaced by a new join when missing, expiring or when the IPs change.
// Nothing secret is sent before the server's CA matched the token.
//
// Certificates are renewed without the token (renewer.go): at start,
// stored credentials that are still valid but close to expiry are renewed
// by presenting the node certificate, and KeepRenewed does the same every
// 12 hours for certificates within 90 days of expiry while the agent runs;
// ServingCertificateFrom serves the renewed serving certificate.
package join
