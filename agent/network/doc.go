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
// No pause container is used: the runtime creates each container of a pod
// inside the namespace at NetnsPath(podUID).
//
// iptables: the backend is chosen the way Kubernetes' iptables-wrapper does
// it (see DetectIPTables): if only one of iptables-legacy / iptables-nft is
// installed, that one; otherwise the one that already holds ORCH- or KUBE-
// chains, else the one with more rules, with nft winning a tie.
package network
