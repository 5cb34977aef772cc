// Package aggregator proxies requests for API groups served by extension
// API servers (non-local APIServices) to their Service, as kube-aggregator
// does: TLS verified by the APIService's caBundle for <svc>.<ns>.svc (or
// not at all with insecureSkipTLSVerify), the front-proxy client
// certificate, the authenticated user in X-Remote-User/-Group/-Extra-*
// headers, and the client's own credentials stripped. A ServiceResolver
// turns the Service reference into an address.
package aggregator
