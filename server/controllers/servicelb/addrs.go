package servicelb

import corev1 "k8s.io/api/core/v1"

// NodeAddresses are the addresses every load balancer of the cluster
// answers on: the Ready nodes' IPv4 ExternalIP, else InternalIP, sorted
// (the built-in Ingress controller reports them too).
func NodeAddresses(nodes []*corev1.Node) []string { return nodeAddrs(nodes) }
