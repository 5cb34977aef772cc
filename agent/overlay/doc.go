// Package overlay connects the pod subnets of the cluster's nodes, as
// flannel does: every node gets routes to every other node's podCIDR.
//
// Two backends:
//   - vxlan (default): a VXLAN device (orch.1, VNI 1, UDP 8472, learning
//     off, local = node IP, MTU = underlay - 50) holding the node's
//     podCIDR .0/32. For every other node: an FDB entry (its device MAC ->
//     its node IP), a permanent neighbour (its .0 -> MAC) and a route
//     podCIDR via its .0 dev orch.1 onlink. Each agent publishes its device
//     MAC in its Node's orch.io/vxlan-mac annotation (flannel's backend-data).
//   - host-gw: a route podCIDR via the other node's InternalIP; the nodes
//     must share an L2 segment.
//
// Desired state is computed from the Node list by pure functions
// (desired.go); the netlink side (dataplane.go) makes the host match it
// idempotently and removes what belongs to nodes that left. Routes orch
// programs carry their own route protocol number so they are told apart from
// everything else on the host. The state is left in place when the agent
// stops (pods keep their network across agent restarts); Teardown removes it.
// A node whose IP is a loopback address (the single-host tests) has no
// overlay: no other node could reach it.
package overlay
