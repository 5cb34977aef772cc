// Package runtime runs pod containers on containerd.
//
// Managed (StartManaged) is a containerd daemon the agent runs as its child
// when no --container-runtime-endpoint is given: its own config (no CRI
// plugin, quiet logs), root under <data-dir>/agent/containerd/root, state and
// socket under /run/orch/containerd; restarted when it dies, stopped with
// SIGTERM then SIGKILL on shutdown. Containers survive both, since their
// shims are independent processes. Connect opens a client to any endpoint.
//
// Interface is the seam the pod worker uses (create, start, stop, remove,
// status, list, exec, and UpdateContainerResources for in-place resize, a
// task update of the running container's cgroup); Containerd is the real implementation and Fake its
// in-memory twin. Containers live in the containerd namespace "orch" and
// carry labels (pod UID/name/namespace, container name, restart count, log
// path, start time, OOM kill) from which the agent rebuilds its state after a
// restart (ListContainers).
//
// There is no pause container: every container of a pod joins the network
// namespace the network layer made (ContainerSpec.NetnsPath) and gets its own
// UTS namespace with the pod's hostname; host-network containers (no
// NetnsPath) share the host's network and UTS namespaces. An ephemeral
// container may join its target's PID namespace (PIDNamespacePath). As CRI
// does, /sys/fs/cgroup shows the container's own cgroups (read-only unless
// privileged; a private cgroup namespace on cgroup v2). Output goes to a
// CRI-format log file (see logs.go for the format, rotation and why FIFOs are
// read in-process) and to clients attached with Attach; containers with
// stdin keep it open for them (attach.go). Terminal sizes of attach and exec
// sessions resize the task's or process's TTY.
package runtime
