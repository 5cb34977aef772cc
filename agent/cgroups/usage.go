package cgroups

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Usage is what a cgroup has used: cumulative CPU time and memory, the
// numbers kubelet's resource metrics and summary API report.
type Usage struct {
	CPUNanos uint64 // cumulative CPU time
	// MemoryUsage is all memory charged; MemoryWorkingSet is that minus
	// inactive file cache (what the OOM killer weighs, kubelet's working set).
	MemoryUsage      uint64
	MemoryWorkingSet uint64
}

// Usage reads the usage of cgroupPath (v1: cpuacct and memory
// hierarchies; v2: cpu.stat and memory.current).
func (m *Manager) Usage(cgroupPath string) (Usage, error) {
	if m.be.version() == 2 {
		return usageV2(m.be.dir("", cgroupPath))
	}
	return usageV1(m.be.dir("cpuacct", cgroupPath), m.be.dir("memory", cgroupPath))
}

func usageV1(cpuDir, memDir string) (Usage, error) {
	cpu, err := readUint(filepath.Join(cpuDir, "cpuacct.usage"))
	if err != nil {
		return Usage{}, err
	}
	mem, err := readUint(filepath.Join(memDir, "memory.usage_in_bytes"))
	if err != nil {
		return Usage{}, err
	}
	inactive, err := readKey(filepath.Join(memDir, "memory.stat"), "total_inactive_file")
	if err != nil {
		return Usage{}, err
	}
	return Usage{CPUNanos: cpu, MemoryUsage: mem, MemoryWorkingSet: sub(mem, inactive)}, nil
}

func usageV2(dir string) (Usage, error) {
	usec, err := readKey(filepath.Join(dir, "cpu.stat"), "usage_usec")
	if err != nil {
		return Usage{}, err
	}
	mem, err := readUint(filepath.Join(dir, "memory.current"))
	if err != nil {
		return Usage{}, err
	}
	inactive, err := readKey(filepath.Join(dir, "memory.stat"), "inactive_file")
	if err != nil {
		return Usage{}, err
	}
	return Usage{CPUNanos: usec * 1000, MemoryUsage: mem, MemoryWorkingSet: sub(mem, inactive)}, nil
}

func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

func readUint(file string) (uint64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", file, err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", file, err)
	}
	return v, nil
}
