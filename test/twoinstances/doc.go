// Package twoinstances runs two real `orch server` processes with their
// embedded agents side by side on one host, told apart only by --data-dir,
// their ports and their cluster/service CIDRs: every host-global name (run
// dir and containerd socket, bridge, DNS link, netns and chain prefixes,
// cgroup root) must derive from the data dir (internal/hostnames) without
// the hidden knobs other tests pass. A pod runs on each while both nodes
// are Ready; a server reusing the first one's cluster CIDR, or the second
// one's service CIDR, must fail at start naming that one's bridge or DNS
// link; then orch-killall.sh, fed by
// `orch host-names --data-dir X`, removes one instance without touching
// the other, and then the other. Root only; nothing under /var/lib/orch or
// /run/orch is used.
package twoinstances
