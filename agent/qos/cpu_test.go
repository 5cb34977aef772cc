package qos

import "testing"

func TestCPUShares(t *testing.T) {
	tests := []struct {
		milli int64
		want  uint64
	}{
		{0, 2}, {1, 2}, {2, 2}, {3, 3}, {10, 10}, {100, 102}, {500, 512}, {1000, 1024},
		{2000, 2048}, {256000, 262144}, {300000, 262144},
	}
	for _, tt := range tests {
		if got := CPUShares(tt.milli); got != tt.want {
			t.Errorf("CPUShares(%d) = %d, want %d", tt.milli, got, tt.want)
		}
	}
}

func TestCFSQuota(t *testing.T) {
	tests := []struct {
		milli, period, want int64
	}{
		{0, 100000, 0}, {1, 100000, 1000}, {5, 100000, 1000}, {10, 100000, 1000}, {11, 100000, 1100},
		{200, 100000, 20000}, {500, 100000, 50000}, {1000, 100000, 100000}, {1500, 100000, 150000},
		{1000, 50000, 100000}, // period fixed at 100ms as with CPUCFSQuotaPeriod off
	}
	for _, tt := range tests {
		if got := CFSQuota(tt.milli, tt.period); got != tt.want {
			t.Errorf("CFSQuota(%d, %d) = %d, want %d", tt.milli, tt.period, got, tt.want)
		}
	}
}

func TestCPUWeight(t *testing.T) {
	tests := []struct{ shares, want uint64 }{
		{0, 1}, {2, 1}, {1024, 39}, {2048, 79}, {262143, 9999}, {262144, 10000}, {300000, 10000},
	}
	for _, tt := range tests {
		if got := CPUWeight(tt.shares); got != tt.want {
			t.Errorf("CPUWeight(%d) = %d, want %d", tt.shares, got, tt.want)
		}
	}
}
