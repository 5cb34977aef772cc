package agent

import (
	"context"
	"fmt"
	pathpkg "path"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/cgroups"
	"github.com/orch/orch/agent/kubeletapi"
	"github.com/orch/orch/agent/qos"
	"github.com/orch/orch/agent/runtime"
)

var _ kubeletapi.CgroupSource = (*nodeStats)(nil)

// Cgroups reads, for /metrics/cadvisor, the cgroup of each running pod
// and of its running containers: usage (as /metrics/resource) plus RSS
// and limits. Cgroups that are gone or not made yet are skipped.
func (s *nodeStats) Cgroups(ctx context.Context) ([]kubeletapi.CgroupStats, error) {
	var out []kubeletapi.CgroupStats
	for _, p := range s.pods() {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		parent := s.cg.PodPath(qos.Class(p), p.UID)
		pod, ok := s.cgroupStats(parent)
		if !ok {
			continue
		}
		pod.Pod, pod.Namespace = p.Name, p.Namespace
		if p.Status.StartTime != nil {
			pod.Start = p.Status.StartTime.Time
		}
		out = append(out, pod)
		list, err := s.rt.ListContainers(ctx, string(p.UID))
		if err != nil {
			return out, fmt.Errorf("containers of %s/%s: %w", p.Namespace, p.Name, err)
		}
		for _, c := range list {
			if c.State != runtime.StateRunning {
				continue
			}
			cs, ok := s.cgroupStats(cgroups.ContainerCgroupsPath(parent, c.ID))
			if !ok {
				continue
			}
			cs.Name, cs.Container, cs.Pod, cs.Namespace, cs.Image, cs.Start = c.ID, c.Name, p.Name, p.Namespace, c.Image, c.StartedAt
			out = append(out, cs)
		}
	}
	return out, nil
}

// cgroupStats reads one cgroup; false when it cannot be read.
func (s *nodeStats) cgroupStats(path string) (kubeletapi.CgroupStats, bool) {
	u, err := s.cg.Usage(path)
	if err != nil {
		return kubeletapi.CgroupStats{}, false
	}
	d, err := s.cg.Details(path)
	if err != nil {
		return kubeletapi.CgroupStats{}, false
	}
	return kubeletapi.CgroupStats{ID: pathpkg.Clean("/" + path), Usage: usage(u), MemoryRSS: d.MemoryRSS, MemoryLimit: d.MemoryLimit,
		CPUQuota: d.CPUQuota, CPUPeriod: d.CPUPeriod, CPUShares: d.CPUShares}, true
}
