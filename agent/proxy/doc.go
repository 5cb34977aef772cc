// Package proxy is orch's Service proxy: the kube-proxy (iptables mode)
// inside every agent. It watches Services and EndpointSlices
// (discovery.k8s.io/v1) and programs the node's nat and filter tables so
// that ClusterIPs, NodePorts, externalIPs and LoadBalancer ingress IPs
// reach the Services' ready endpoints.
//
// The rules follow kube-proxy's iptables mode, with orch's chain prefix P
// (default "ORCH-") instead of "KUBE-":
//
//	nat    P SERVICES       jumped to from PREROUTING and OUTPUT: one rule per
//	                        ClusterIP/externalIP/LB IP:port, NODEPORTS last
//	       P NODEPORTS      NodePorts, for local destination addresses
//	       P SVC-<hash>     a service port's endpoints (statistic random 1/n)
//	       P SVL-<hash>     its node-local endpoints (traffic policy Local)
//	       P EXT-<hash>     traffic from outside (NodePort, LB, externalIP)
//	       P FW-<hash>      loadBalancerSourceRanges
//	       P SEP-<hash>     one endpoint: DNAT (and hairpin masquerade)
//	       P MARK-MASQ      marks packets to masquerade
//	       P PROXY-POST     jumped to from POSTROUTING: masquerades marked packets
//	filter P SERVICES       REJECT for ClusterIPs without endpoints
//	       P EXTERNAL-SVC   REJECT/DROP for external addresses without endpoints
//	       P PROXY-FORWARD  accepts marked and established forwarded traffic
//	       P PROXY-FIREWALL loadBalancerSourceRanges drops, localhost guard
//
// (P POSTROUTING and P FORWARD belong to the pod network, package network.)
// Hashes are kube-proxy's: base32 of the sha256 of the service port name
// ("ns/name:port"), the protocol and, for SEP chains, the endpoint; they are
// shortened when a long prefix would pass iptables' 28-character limit.
//
// Every sync renders the whole ruleset in memory, then hands
// iptables-restore --noflush only the chains whose rules changed, plus the
// deletion of chains no longer wanted, in one transaction per table;
// other software's chains are never flushed. Missing jumps from the
// built-in chains are inserted by one restore (go-iptables checks the odd
// ones). Syncs are event-driven and coalesced (at most one per
// MinSyncPeriod), with a long full resync for safety.
//
// At scale, as kube-proxy: above 1,000 endpoints (large cluster mode) the
// per-endpoint rules carry no comment. On iptables-nft, a big restore into
// a small table starts with "-S", which makes iptables-nft-restore fetch
// the whole table instead of keeping the chains it names in a sorted list,
// quadratic in their number (see cacheHint).
package proxy
