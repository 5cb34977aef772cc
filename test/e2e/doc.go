// Package e2e holds end-to-end tests of orch on this host: a real
// `orch server --disable-agent` (test/testutil) and a real `orch agent`
// child process with its own data dir, managed containerd, bridge, netns
// prefix, iptables chains, cgroup root and pod CIDR (10.244.<n>.0/24), so
// the tests never touch a live orch on the same host. Images are the test
// busybox image (test/images) dropped into the agent's air-gap dir as
// nginx:1.25 and busybox:1.36.
//
// The tests need root, containerd, runc and busybox-static; without them
// they skip with a message. Everything they create (processes, mounts,
// namespaces, links, chains, cgroups, directories) is removed in t.Cleanup,
// also when they fail.
package e2e
