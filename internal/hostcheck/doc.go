// Package hostcheck checks that a host's kernel and tools can run orch:
// cgroup v2 with the memory and cpu controllers, overlayfs, the vxlan and
// br_netfilter modules, iptables or nft, and IP forwarding. Every check is a
// pure function of a Host (file reads, PATH look-ups, the kernel release),
// so tests run them over fake /proc and /sys trees. `orch check-config`
// prints the results with the exact fix for each failure.
package hostcheck
