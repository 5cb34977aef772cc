// Package node registers the agent's Node object and keeps it alive: labels
// (kubernetes.io/hostname, os, arch and --node-label), taints, capacity and
// allocatable (capacity minus a system reservation), addresses (InternalIP,
// Hostname) and nodeInfo are set at registration; the server assigns
// spec.podCIDR, which WaitPodCIDR waits for with a watch. Heartbeat renews the
// node's Lease in kube-node-lease every 10 seconds and writes the conditions
// Ready, MemoryPressure, DiskPressure and PIDPressure when they change and at
// least once a minute.
package node
