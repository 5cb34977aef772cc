// Package node registers the agent's Node object and keeps it alive: labels
// (kubernetes.io/hostname, os, arch and --node-label), taints, capacity and
// allocatable (capacity minus a system reservation), addresses (InternalIP,
// Hostname) and nodeInfo are set at registration; the server assigns
// spec.podCIDR, which WaitPodCIDR waits for with a watch. Heartbeat renews the
// node's Lease in kube-node-lease every 10 seconds and writes the conditions
// Ready, MemoryPressure, DiskPressure and PIDPressure when they change and at
// least once a minute. Checker computes them from real health: Ready=False
// (KubeletNotReady, kubelet's messages) when containerd does not answer or
// the pod network's bridge is missing (which it then repairs), and the
// pressure conditions from kubelet's default hard eviction thresholds.
// KeepRegistered watches the Node and registers it again when it is deleted,
// with the podCIDR the node's bridge uses.
package node
