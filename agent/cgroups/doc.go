// Package cgroups places pods in cgroups the way kubelet's cgroupfs driver
// does, under orch's own parent so nothing else on the host is touched:
//
//	/<Root>/kubepods                  node allocatable: cpu.shares, memory limit
//	/<Root>/kubepods/pod<uid>         Guaranteed pods
//	/<Root>/kubepods/burstable        cpu.shares = sum of Burstable pods' cpu requests
//	/<Root>/kubepods/burstable/pod<uid>
//	/<Root>/kubepods/besteffort       cpu.shares = 2
//	/<Root>/kubepods/besteffort/pod<uid>
//
// Root is "orch" in production. A pod cgroup gets cpu shares from the pod's
// cpu requests, a CFS quota only when every container has a cpu limit, a
// memory limit only when every container has a memory limit, and an optional
// pids limit (kubelet's ResourceConfigForPod, CFS period 100ms). Containers go
// one level below, at ContainerCgroupsPath(parent, id), which is the OCI
// linux.cgroupsPath runc expects with the cgroupfs driver (not systemd).
//
// Manager detects the host's mode with containerd/cgroups' Mode(): legacy and
// hybrid hosts use the v1 hierarchies (cpu, cpuacct, cpuset, memory, pids are
// created and configured via containerd/cgroups/v3/cgroup1; cpuset copies its
// parent's cpus/mems), unified hosts one cgroup2 tree whose ancestors get
// +cpu +memory +pids in cgroup.subtree_control, with cpu.weight,
// cpu.max, memory.max and pids.max written directly. Removal walks every
// mounted hierarchy (runc also creates dirs in freezer, devices, blkio, ...,
// and on hybrid hosts in the cgroup2 mount /sys/fs/cgroup/unified, which
// PodCgroups lists too) and removes directories leaf-first, waiting while tasks drain; it never
// kills anything: the runtime stops containers first.
//
// OOM: OOMKilled reads memory.oom_control's oom_kill (v1) or memory.events'
// oom_kill (v2) of a container's cgroup, for an exit status of 137. The OOM
// score of a container comes from package qos; OOMScoreAdj clamps it to the
// agent's own score (a host without CAP_SYS_RESOURCE cannot go lower), as
// containerd's restrict_oom_score_adj does, and logs when it does.
package cgroups
