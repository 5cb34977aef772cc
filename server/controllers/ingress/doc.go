// Package ingress is the server side of orch's built-in Ingress controller
// (the agents serve the traffic: agent/ingress). The leader creates the
// IngressClass "orch" (controller orch.io/ingress, the cluster's default
// class) when it starts leading, and keeps status.loadBalancer.ingress of
// the Ingresses of that class at the Ready nodes' addresses, written only
// when they change. With `orch server --disable ingress` it deletes that
// IngressClass instead, so the agents free ports 80 and 443.
package ingress
