// Package qos holds the kubelet's pure resource policy for a pod, without
// touching the host: the QoS class (Class, as kubelet's GetPodQOS), the pod's
// effective requests and limits (PodRequests/PodLimits, as
// k8s.io/component-helpers/resource: max(sum of app containers and
// restartable init containers, max of init containers) plus overhead), the
// CPU conversions (CPUShares, CFSQuota, CPUWeight, as kubelet's
// MilliCPUToShares/MilliCPUToQuota and its cgroup v2 weight mapping) and the
// OOM score policy (OOMScoreAdj, as kubelet's GetContainerOOMScoreAdjust),
// plus ClampOOMScoreAdj for hosts that may not lower a process's score below
// the agent's own (no CAP_SYS_RESOURCE), as containerd's
// restrict_oom_score_adj does.
//
// Pod-level resources (spec.resources), DRA node-allocatable claims and
// in-place resize status are ignored: orch does not enable those features.
// Missing requests are not defaulted from limits here; that is API
// defaulting's job (a container with limits but no requests is Burstable).
package qos
