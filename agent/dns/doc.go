// Package dns is orch's built-in cluster DNS: every agent answers the
// kube-dns Service address itself, as NodeLocal DNSCache does, so no CoreDNS
// image is pulled and no pod runs for it.
//
// The agent puts the cluster DNS IP (--cluster-dns, default 10.43.0.10) on a
// dummy interface of its own (orch-dns; derived from the bridge name when a
// test uses another bridge; a bridge without ports on kernels built without
// the dummy driver), serves UDP and TCP port 53 on it and removes the
// interface when it stops. Pods reach
// it through their default route to the node's bridge: the address is local
// to every node. The Service proxy leaves that Service alone (it carries the
// service.kubernetes.io/service-proxy-name label).
//
// Records come from a client-go informer cache of Services and
// EndpointSlices (indexed by service, ClusterIP and endpoint address), read
// on each query, so they follow the API without polling. They are those of
// CoreDNS's kubernetes plugin with TTL 5:
//
//	<svc>.<ns>.svc.<domain>              A/AAAA: ClusterIPs, or ready endpoints when headless
//	<host>.<svc>.<ns>.svc.<domain>       A/AAAA: the endpoint with that hostname (or dashed IP)
//	_<port>._<proto>.<svc>.<ns>.svc.<domain>  SRV for named ports (per endpoint when headless)
//	<a-b-c-d>.<ns>.pod.<domain>          A: a.b.c.d
//	ExternalName services                CNAME (the target is looked up too)
//	reverse names of ClusterIPs and endpoint IPs  PTR
//
// Other names in the cluster domain get NXDOMAIN (or NODATA for names that
// exist) with the zone's SOA in the authority section, so search-path
// expansions fail fast. Everything else is forwarded to the host's
// nameservers from /etc/resolv.conf, retrying over TCP when a UDP answer is
// truncated.
package dns
