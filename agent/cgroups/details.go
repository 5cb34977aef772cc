package cgroups

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Details are a cgroup's RSS and limits, as cAdvisor reports them
// (container_memory_rss, container_spec_*). Zero values mean unlimited
// or unknown; CPUShares is cgroup v1's cpu.shares (v2's cpu.weight
// converted back to shares as cAdvisor does).
type Details struct {
	MemoryRSS   uint64
	MemoryLimit uint64 // 0: unlimited
	CPUQuota    int64  // microseconds per period; 0: unlimited
	CPUPeriod   uint64 // microseconds
	CPUShares   uint64
}

// Details reads the RSS and limits of cgroupPath. Files that are missing
// (a controller not mounted) leave their fields zero.
func (m *Manager) Details(cgroupPath string) (Details, error) {
	if m.be.version() == 2 {
		return detailsV2(m.be.dir("", cgroupPath))
	}
	return detailsV1(m.be.dir("memory", cgroupPath), m.be.dir("cpu", cgroupPath))
}

func detailsV1(memDir, cpuDir string) (Details, error) {
	var d Details
	rss, err := readKey(filepath.Join(memDir, "memory.stat"), "total_rss")
	if err != nil {
		return d, err
	}
	d.MemoryRSS = rss
	if limit, err := readUint(filepath.Join(memDir, "memory.limit_in_bytes")); err == nil && limit < math.MaxInt64/4096*4096 {
		d.MemoryLimit = limit // v1 reports "no limit" as the page-rounded max int64
	}
	if q, err := readInt(filepath.Join(cpuDir, "cpu.cfs_quota_us")); err == nil && q > 0 {
		d.CPUQuota = q
	}
	d.CPUPeriod, _ = readUint(filepath.Join(cpuDir, "cpu.cfs_period_us"))
	d.CPUShares, _ = readUint(filepath.Join(cpuDir, "cpu.shares"))
	return d, nil
}

func detailsV2(dir string) (Details, error) {
	var d Details
	anon, err := readKey(filepath.Join(dir, "memory.stat"), "anon")
	if err != nil {
		return d, err
	}
	d.MemoryRSS = anon
	if b, err := os.ReadFile(filepath.Join(dir, "memory.max")); err == nil {
		d.MemoryLimit, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64) // "max": 0
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			d.CPUQuota, _ = strconv.ParseInt(f[0], 10, 64) // "max": 0
			d.CPUPeriod, _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	if w, err := readUint(filepath.Join(dir, "cpu.weight")); err == nil && w > 0 {
		d.CPUShares = weightToShares(w)
	}
	return d, nil
}

// weightToShares inverts the shares → weight conversion of runc/cAdvisor
// (weight = 1 + (shares-2)*9999/262142).
func weightToShares(w uint64) uint64 { return 2 + (w-1)*262142/9999 }

func readInt(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}
