package qos

// CPU conversion constants, as kubelet's pkg/kubelet/cm/helpers_linux.go.
const (
	MinShares      = 2
	MaxShares      = 262144
	SharesPerCPU   = 1024
	MilliCPUToCPU  = 1000
	QuotaPeriod    = 100000 // default CFS period in microseconds
	MinQuotaPeriod = 1000   // smallest CFS quota in microseconds
	MaxWeight      = 10000  // cgroup v2 cpu.weight upper bound
)

// CPUShares converts a cpu request in millicores to cgroup v1 cpu.shares as
// kubelet's MilliCPUToShares does: 1024 per CPU, clamped to [2, 262144].
func CPUShares(milliCPU int64) uint64 {
	if milliCPU == 0 {
		return MinShares
	}
	shares := (milliCPU * SharesPerCPU) / MilliCPUToCPU
	if shares < MinShares {
		return MinShares
	}
	if shares > MaxShares {
		return MaxShares
	}
	return uint64(shares)
}

// CFSQuota converts a cpu limit in millicores to a CFS quota in microseconds
// for the given period as kubelet's MilliCPUToQuota does with the
// CPUCFSQuotaPeriod feature off: the period is always QuotaPeriod, a zero
// limit gives 0 (no quota) and the quota is at least MinQuotaPeriod.
func CFSQuota(milliCPU int64, period int64) int64 {
	_ = period // kubelet ignores it unless CPUCFSQuotaPeriod is enabled
	if milliCPU == 0 {
		return 0
	}
	quota := (milliCPU * QuotaPeriod) / MilliCPUToCPU
	if quota < MinQuotaPeriod {
		return MinQuotaPeriod
	}
	return quota
}

// CPUWeight converts cgroup v1 cpu.shares to cgroup v2 cpu.weight as kubelet's
// getCPUWeight does: [2, 262144] maps linearly onto [1, 10000].
func CPUWeight(shares uint64) uint64 {
	if shares >= MaxShares {
		return MaxWeight
	}
	if shares < MinShares {
		shares = MinShares
	}
	return 1 + ((shares-2)*9999)/262142
}
