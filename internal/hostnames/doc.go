// Package hostnames derives the host-global names of one orch instance
// from its data dir: the run dir (managed containerd state and socket,
// container stdio FIFOs), the pod bridge, the cluster DNS link, the VXLAN
// device (not its VNI: every node of a cluster needs the same one), the
// pod netns prefix, the iptables chain prefix and the cgroup root. The default data dir (/var/lib/orch) keeps orch's historic
// names (orch0, orch-dns, orch.1, ORCH-, ...); any other data dir gets a
// suffix of 6 hex characters of the SHA-256 of its absolute path in every
// name, so a second `orch server --data-dir X` beside the first touches
// none of its objects. Every derived name fits the kernel's limits
// (interface names 15 characters, chain prefixes 14 as agent/netpol and
// agent/proxy require) and none starts with a default name followed by
// the default's separator, so orch-killall.sh aimed at one instance never
// matches another's netns, chains, cgroups or run dir.
//
// The package is pure: no host access, no state.
package hostnames
