// Package cluster starts a multi-node orch cluster on one machine for tests,
// through scripts/testcluster.sh: a private test bridge, a network namespace
// per node, `orch server` + `orch agent` on node 1 and `orch agent` on the
// others, each node with its own managed containerd, cgroup root and state
// dirs. Start registers the tear-down (the script's `down`) with t.Cleanup,
// so everything goes even when the test fails.
package cluster
