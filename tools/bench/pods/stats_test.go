package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, v := range n {
			out = append(out, time.Duration(v)*time.Millisecond)
		}
		return out
	}
	fifty := make([]int, 50)
	for i := range fifty {
		fifty[i] = 50 - i
	}
	for _, tc := range []struct {
		name          string
		in            []time.Duration
		p50, p99, max time.Duration
	}{
		{"empty", nil, 0, 0, 0},
		{"one", ms(7), 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond},
		{"fifty unsorted", ms(fifty...), 25 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond},
	} {
		s := summarize(tc.in)
		if s.P50 != tc.p50 || s.P99 != tc.p99 || s.Max != tc.max {
			t.Errorf("%s: got p50 %v p99 %v max %v, want %v %v %v", tc.name, s.P50, s.P99, s.Max, tc.p50, tc.p99, tc.max)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
