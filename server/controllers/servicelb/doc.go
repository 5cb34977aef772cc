// Package servicelb is orch's built-in load balancer for Services of type
// LoadBalancer, as k3s's ServiceLB: every Ready node is a load balancer, so
// status.loadBalancer.ingress lists the nodes' addresses (ExternalIP, else
// InternalIP) and the agents' Service proxy DNATs traffic to those
// addresses and the Service's ports. Services with a loadBalancerClass are
// left to their own controller.
package servicelb
