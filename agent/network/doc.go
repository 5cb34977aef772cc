// Package network programs a node's host networking for pods: the orch0
// bridge with the podCIDR's gateway address, one network namespace and veth
// pair per pod with an address from the node's IP allocator (package ipam),
// and iptables rules that masquerade pod traffic leaving the cluster CIDR.
//
// Every host change is an idempotent ensure step in the style of the CNI
// bridge plugin: "already exists" is success, and a multi-step change (pod
// setup) rolls back what it created when a later step fails. Nothing outside
// orch's own names is touched: the bridge, the pod namespaces
// (<NetnsDir>/<NetnsPrefix><hash of pod UID>), the host veth ends
// ("veth"+hash of pod UID) and the iptables chains ORCH-POSTROUTING (nat) and
// ORCH-FORWARD (filter) with their jump rules, each with an "orch: ..."
// comment. Names are configurable so tests can run beside a live orch.
//
// Interface (SetupPod, TeardownPod, NetnsPath, PodIDs) is the seam the pod
// runtime uses; Manager is the real one and Fake its in-memory twin. PodIDs
// (the pods holding IP allocations) is the garbage-collection handle: an IP
// is released only after the pod's veth and namespace are gone.
//
// Host ports (ports[].hostPort, PodNet.Ports) work like the CNI portmap
// plugin: <prefix>HOSTPORTS (nat, jumped to from PREROUTING and OUTPUT for
// local destination addresses) jumps to one chain per pod, <prefix>HP-<hash>,
// that DNATs hostIP:hostPort/proto to podIP:containerPort; <prefix>HOSTPORTS-MASQ
// (from POSTROUTING) jumps to <prefix>HM-<hash>, which masquerades hairpin
// traffic and locally originated 127.0.0.0/8 traffic (route_localnet is on
// for the bridge, guarded by an INPUT rule that drops other 127.0.0.0/8
// traffic from pods, as kube-proxy does). Rules carry comments naming the
// pod; they are added by SetupPod (rolled back on failure, skipped when
// already programmed) and removed by TeardownPod and Cleanup.
//
// CheckHost reports whether the bridge is in place for the node's Ready
// condition; EnsureHost repairs it.
//
// No pause container is used: the runtime creates each container of a pod
// inside the namespace at NetnsPath(podUID).
//
// iptables: the backend is chosen the way Kubernetes' iptables-wrapper does
// it (see DetectIPTables): if only one of iptables-legacy / iptables-nft is
// installed, that one; otherwise the one that already holds ORCH- or KUBE-
// chains, else the one with more rules, with nft winning a tie.
package network
