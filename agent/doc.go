// Package agent is the node side of orch: `orch agent` (Run) joins a node to
// the cluster and runs the pods bound to it on containerd, programming the
// host's network and cgroups itself. `orch server` runs one for its own node
// unless --disable-agent (StartEmbedded / RunEmbedded).
//
// Run wires the building blocks in seed 000's order:
//
//  1. join (agent/join): the K10 token pins the CA; the node's certificate
//     and kubeconfig are kept in <data-dir>/agent/ for restarts (a server
//     that is not up yet is retried; a wrong token or CA stops at once);
//  2. containerd (agent/runtime): --container-runtime-endpoint, or a managed
//     containerd child; images (agent/images) with the air-gap dir
//     <data-dir>/agent/images imported at start and watched;
//  3. the Node (agent/node): registered with labels, taints, capacity,
//     allocatable, addresses and nodeInfo; then spec.podCIDR, which the
//     server assigns, is awaited; Lease and conditions are kept fresh;
//  4. the host: pod bridge, masquerade and host-port rules (agent/network),
//     routes to the other nodes' pod subnets (agent/overlay, VXLAN or
//     host-gw), the Service proxy (agent/proxy, iptables), cluster DNS
//     (agent/dns), NetworkPolicy (agent/netpol), QoS cgroup tiers
//     (agent/cgroups), local-path volume data (agent/localpath); the Node's
//     health (containerd, bridge, pressure) feeds its Ready condition;
//  5. the pod loop (agent/kubelet) with volumes (agent/volumes), env
//     (agent/envvars), probes (agent/prober) and hooks (agent/lifecycle);
//  6. the kubelet API (agent/kubeletapi) on --kubelet-port with the node's
//     serving certificate, for the API server's logs/exec/attach/port-forward
//     proxy (left off, with a warning, when the server issued no serving
//     certificate).
//
// On shutdown the agent stops its managed containerd; containers keep
// running and are adopted by the next run.
//
// Config's hidden knobs (bridge name, containerd state dir and namespace,
// cgroup root, netns prefix, iptables chain prefix, FIFO dir) let tests run
// beside a live orch on the same host.
package agent
