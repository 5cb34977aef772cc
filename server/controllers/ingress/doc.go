// Package ingress is the server side of orch's built-in Ingress controller
// (the agents serve the traffic: agent/ingress). EnsureClass creates the
// IngressClass "orch" (controller orch.io/ingress, the cluster's default
// class) and RemoveClass deletes it (`orch server --disable ingress`, so
// the agents free ports 80 and 443): the leader runs one of them as a
// bootstrap step (server/ingress.go). The Controller keeps
// status.loadBalancer.ingress of the Ingresses of that class at the Ready
// nodes' addresses, written only when they change.
package ingress
