package cgroups

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/qos"
)

// Resources is a cgroup's configuration, independent of the cgroup version
// (kubelet's ResourceConfig). Nil fields are left as they are.
type Resources struct {
	CPUShares *uint64
	CPUQuota  *int64 // microseconds per CPUPeriod; -1 = unlimited
	CPUPeriod *uint64
	Memory    *int64 // bytes; -1 = unlimited
	PidsLimit *int64 // > 0 limits; <= 0 = unlimited
}

// PodResources returns the pod cgroup's configuration as kubelet's
// ResourceConfigForPod does with CFS quota enforced and a 100ms period:
// BestEffort gets 2 shares only; Burstable and Guaranteed get shares from
// requests, a quota only when every container (init ones too) has a cpu
// limit, and a memory limit only when every container has a memory limit.
// Unlike kubelet, absent limits are written as unlimited (-1) so an update is
// level-based.
func PodResources(pod *corev1.Pod, pidsLimit int64) Resources {
	var r Resources
	if pidsLimit > 0 {
		r.PidsLimit = &pidsLimit
	}
	if qos.Class(pod) == corev1.PodQOSBestEffort {
		r.CPUShares = ptr(uint64(qos.MinShares))
		r.CPUQuota, r.Memory = ptr(int64(-1)), ptr(int64(-1))
		return r
	}
	cpuLimited, memLimited := limitsDeclared(pod)
	limits := qos.PodLimits(pod)
	r.CPUShares = ptr(qos.CPUShares(qos.MilliCPU(qos.PodRequests(pod))))
	r.CPUQuota, r.Memory = ptr(int64(-1)), ptr(int64(-1))
	if cpuLimited {
		r.CPUQuota = ptr(qos.CFSQuota(qos.MilliCPU(limits), qos.QuotaPeriod))
		r.CPUPeriod = ptr(uint64(qos.QuotaPeriod))
	}
	if memLimited {
		r.Memory = ptr(qos.MemoryBytes(limits))
	}
	return r
}

// limitsDeclared reports whether every container, init ones included, has a
// non-zero cpu limit, and a non-zero memory limit.
func limitsDeclared(pod *corev1.Pod) (cpu, mem bool) {
	cpu, mem = true, true
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Resources.Limits.Cpu().IsZero() {
				cpu = false
			}
			if list[i].Resources.Limits.Memory().IsZero() {
				mem = false
			}
		}
	}
	return cpu, mem
}

// NodeResources returns the kubepods cgroup's configuration from node
// allocatable, as kubelet's getCgroupConfig: cpu as shares, memory as limit.
func NodeResources(allocatable corev1.ResourceList) Resources {
	var r Resources
	if q, ok := allocatable[corev1.ResourceCPU]; ok {
		r.CPUShares = ptr(qos.CPUShares(q.MilliValue()))
	}
	if q, ok := allocatable[corev1.ResourceMemory]; ok {
		r.Memory = ptr(q.Value())
	}
	if q, ok := allocatable["pid"]; ok {
		r.PidsLimit = ptr(q.Value())
	}
	return r
}

// v2File is one cgroup v2 interface file and the value to write.
type v2File struct {
	Controller, Name, Value string
}

// v2Values maps r onto cgroup v2 files: cpu.weight (kubelet's shares-to-weight
// mapping), cpu.max "<quota|max> <period>", memory.max, pids.max.
func (r Resources) v2Values() []v2File {
	var out []v2File
	if r.CPUShares != nil {
		w := qos.CPUWeight(*r.CPUShares)
		out = append(out, v2File{"cpu", "cpu.weight", strconv.FormatUint(w, 10)})
	}
	if r.CPUQuota != nil {
		period := uint64(qos.QuotaPeriod)
		if r.CPUPeriod != nil {
			period = *r.CPUPeriod
		}
		quota := "max"
		if *r.CPUQuota > 0 {
			quota = strconv.FormatInt(*r.CPUQuota, 10)
		}
		out = append(out, v2File{"cpu", "cpu.max", quota + " " + strconv.FormatUint(period, 10)})
	}
	if r.Memory != nil {
		out = append(out, v2File{"memory", "memory.max", maxOr(*r.Memory)})
	}
	if r.PidsLimit != nil {
		out = append(out, v2File{"pids", "pids.max", maxOr(*r.PidsLimit)})
	}
	return out
}

func maxOr(v int64) string {
	if v <= 0 {
		return "max"
	}
	return strconv.FormatInt(v, 10)
}

func ptr[T any](v T) *T { return &v }
