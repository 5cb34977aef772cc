// Package netpol enforces networking.k8s.io/v1 NetworkPolicy on the node,
// in the agent, with iptables rules in orch's own filter chains (no CNI
// plugin). Every agent watches NetworkPolicies and, while at least one
// exists, Pods (all of them: peers live anywhere) and Namespaces, and
// programs the pods bound to its node. Without a policy no pod is
// isolated, so a cluster that uses none spares each node a watch and a
// cache of every pod.
//
// Chains, under the agent's chain prefix P (default "ORCH-"):
//
//	filter P NETPOL       jumped to from FORWARD, before every other jump to a
//	                      P chain (the pod network's P FORWARD and the proxy's
//	                      P PROXY-FORWARD accept): replies of allowed
//	                      connections (conntrack ESTABLISHED,RELATED) return
//	                      at once; then "-s podIP -j P NP-OUT-<hash>" for each
//	                      local pod isolated for egress and "-d podIP -j
//	                      P NP-IN-<hash>" for each one isolated for ingress
//	       P NP-IN-<hash>  one local pod's allowed sources and ports (RETURN),
//	       P NP-OUT-<hash> or destinations and ports; anything else is DROPped
//
// Nothing is ever ACCEPTed here: allowed traffic RETURNs and FORWARD goes on
// to the pod network's own rules, so a pod-to-pod packet on one node passes
// both the sender's egress chain and the receiver's ingress chain.
// Bridged traffic reaches FORWARD because the pod network turns
// br_netfilter on (package network).
//
// Semantics are upstream's: a pod selected by no policy of a direction is
// open in that direction; policyTypes default to Ingress, plus Egress when
// the policy has egress rules; the allowed traffic is the union of all
// rules of all policies selecting the pod; peers are podSelector (the
// policy's namespace), namespaceSelector, both, or ipBlock with except
// (turned into the disjoint CIDRs that remain); ports carry a protocol,
// a number (with endPort) or a name resolved against the destination pod's
// container ports; an empty from/to or ports list means all. Traffic from
// the node itself to its pods (OUTPUT: probes) is always allowed, as
// upstream says; traffic from pods to the node's own addresses (INPUT:
// the node-local DNS) is not filtered. Host-network pods are neither
// selected nor peers.
//
// Syncs are event-driven and coalesced: informer events poke the loop,
// which renders the whole ruleset in memory (pure code: compile.go,
// render.go) and, when it changed, applies it with one
// `iptables-restore --noflush` transaction that rewrites only this
// package's chains and deletes the stale ones. A light timer re-checks the
// FORWARD jump's position (other components insert their jumps first).
// Rules stay in place when the agent stops, unless nothing is isolated,
// in which case the chains are removed. Cleanup removes everything.
package netpol
