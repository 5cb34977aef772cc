package agent

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/agent/cgroups"
	"github.com/orch/orch/agent/kubeletapi"
	"github.com/orch/orch/agent/qos"
)

// nodeStats reads usage for the kubelet API's metrics endpoints from the
// cgroups the agent made (pods, containers) and /proc (the node).
type nodeStats struct {
	node  string
	cg    cgroupUsage
	rt    kubeletapi.ContainerLister
	pods  func() []*corev1.Pod
	start time.Time
}

var _ kubeletapi.Stats = (*nodeStats)(nil)

// cgroupUsage is the part of the cgroups manager the stats read.
type cgroupUsage interface {
	PodPath(class corev1.PodQOSClass, uid types.UID) string
	Usage(cgroupPath string) (cgroups.Usage, error)
	Details(cgroupPath string) (cgroups.Details, error)
}

var _ cgroupUsage = (*cgroups.Manager)(nil)

func (s *nodeStats) NodeName() string { return s.node }

// Node is the whole machine: CPU time from /proc/stat, working set as
// MemTotal - MemAvailable from /proc/meminfo.
func (s *nodeStats) Node() (kubeletapi.Usage, time.Time, error) {
	cpu, err := procCPUNanos()
	if err != nil {
		return kubeletapi.Usage{}, s.start, err
	}
	total, avail, err := procMem()
	if err != nil {
		return kubeletapi.Usage{}, s.start, err
	}
	used := total - min(avail, total)
	return kubeletapi.Usage{CPUNanos: cpu, MemoryUsage: used, MemoryWorkingSet: used}, s.start, nil
}

// Pods reads each running pod's cgroup and its running containers'. The
// containers are those the pod's status says run (the kubelet's own view,
// written on every change), not a containerd list: the resource metrics
// are scraped every 15 s, and listing every container record with its OCI
// spec and every task cost more than reading the cgroups.
func (s *nodeStats) Pods(context.Context) ([]kubeletapi.PodStats, error) {
	var out []kubeletapi.PodStats
	for _, p := range s.pods() {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		parent := s.cg.PodPath(qos.Class(p), p.UID)
		u, err := s.cg.Usage(parent)
		if err != nil {
			continue // gone, or not made yet
		}
		ps := kubeletapi.PodStats{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Usage: usage(u)}
		if p.Status.StartTime != nil {
			ps.Start = p.Status.StartTime.Time
		}
		for _, c := range p.Status.ContainerStatuses {
			id, ok := strings.CutPrefix(c.ContainerID, "containerd://")
			if !ok || c.State.Running == nil {
				continue
			}
			cu, err := s.cg.Usage(cgroups.ContainerCgroupsPath(parent, id))
			if err != nil {
				continue
			}
			ps.Containers = append(ps.Containers, kubeletapi.ContainerStats{Name: c.Name, Start: c.State.Running.StartedAt.Time, Usage: usage(cu)})
		}
		out = append(out, ps)
	}
	return out, nil
}

func usage(u cgroups.Usage) kubeletapi.Usage {
	return kubeletapi.Usage{CPUNanos: u.CPUNanos, MemoryUsage: u.MemoryUsage, MemoryWorkingSet: u.MemoryWorkingSet}
}

// procCPUNanos is the busy CPU time of all cores (the cpu line of
// /proc/stat minus idle and iowait), in nanoseconds.
func procCPUNanos() (uint64, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, fmt.Errorf("/proc/stat is empty")
	}
	fields := strings.Fields(sc.Text())
	var busy uint64
	for i, v := range fields[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest times are already in user
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		busy += n
	}
	const userHZ = 100 // USER_HZ on Linux
	return busy * (1e9 / userHZ), nil
}

// procMem returns MemTotal and MemAvailable in bytes.
func procMem() (total, avail uint64, err error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseUint(f[1], 10, 64)
		switch f[0] {
		case "MemTotal:":
			total = n * 1024
		case "MemAvailable:":
			avail = n * 1024
		}
	}
	if total == 0 {
		return 0, 0, fmt.Errorf("/proc/meminfo has no MemTotal")
	}
	return total, avail, nil
}
