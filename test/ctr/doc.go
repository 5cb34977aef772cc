// Package ctr tests `orch ctr` end to end: a real `orch server` (test/testutil)
// and a real `orch agent` with its own managed containerd, bridge, netns
// prefix, iptables chains, cgroup root and containerd namespace (as in
// test/e2e, so a live orch on the host is not touched) run a pod; then the
// orch binary, as `orch ctr` and through a `ctr` symlink, lists the pod's
// container, task and image from that containerd.
//
// Needs root, containerd, runc and busybox-static; skips otherwise. The pod
// is deleted through the API before the agent is stopped, so its shim and
// runc state go away; everything else the agent made is removed in
// t.Cleanup, also on failure.
//
// Run: go test ./test/ctr/
package ctr
