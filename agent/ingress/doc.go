// Package ingress is orch's built-in Ingress controller: every agent
// answers HTTP and HTTPS on the node's ports (80 and 443 by default) for the
// networking.k8s.io/v1 Ingresses of IngressClass "orch" and reverse-proxies
// each request to a ready endpoint of the backend Service, with no image to
// pull.
//
// The routing Table is pure: Build turns Ingresses, Services,
// EndpointSlices and TLS Secrets into host and path rules (exact hosts over
// wildcard hosts over rules without a host; Exact paths over the longest
// Prefix; ImplementationSpecific is a Prefix) and certificates chosen by
// SNI. The Controller keeps a Table current from informers (TLS Secrets
// are watched one by one, by name, as the node authorizer allows) and
// swaps it atomically; the Server is net/http with httputil.ReverseProxy,
// which handles HTTP/1.1, HTTP/2 over TLS and WebSocket upgrades, sets the
// X-Forwarded-* headers and retries another endpoint when one refuses the
// connection (a pod that just stopped during a rolling update). The
// listeners are open only while the IngressClass "orch" exists, so
// deleting it (or `orch server --disable ingress`) frees the ports for
// another ingress controller. The leader server writes the Ingresses'
// status (server/controllers/ingress).
package ingress
