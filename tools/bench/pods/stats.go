package main

import (
	"math"
	"slices"
	"time"
)

// summary is nearest-rank percentiles over a set of durations.
type summary struct {
	N             int
	Min, P50, P90 time.Duration
	P99, Max      time.Duration
	Mean          time.Duration
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func summarize(ds []time.Duration) summary {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return summary{}
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return summary{N: len(s), Min: s[0], P50: percentile(s, 0.50), P90: percentile(s, 0.90),
		P99: percentile(s, 0.99), Max: s[len(s)-1], Mean: sum / time.Duration(len(s))}
}
