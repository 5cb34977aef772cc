// Package certs generates the throw-away PKI the baseline kube-apiserver needs:
// a CA, a loopback serving certificate, an admin client certificate
// (O=system:masters), a service-account signing key and a kubeconfig.
package certs
