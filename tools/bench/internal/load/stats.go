package load

import (
	"math"
	"slices"
	"time"
)

// Summary is a latency distribution with exact sample count.
type Summary struct {
	Count int           `json:"count"`
	Min   time.Duration `json:"min_ns"`
	P50   time.Duration `json:"p50_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// Summarize sorts samples in place and returns nearest-rank percentiles.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	return Summary{
		Count: len(samples),
		Min:   samples[0],
		P50:   Percentile(samples, 0.50),
		P99:   Percentile(samples, 0.99),
		Max:   samples[len(samples)-1],
	}
}

// Percentile returns the nearest-rank p-quantile (0 < p <= 1) of sorted samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}
