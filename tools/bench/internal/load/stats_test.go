package load

import (
	"testing"
	"time"
)

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestSummarize(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // reversed: Summarize must sort
	}
	tests := []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one", ms(7), Summary{Count: 1, Min: 7 * time.Millisecond, P50: 7 * time.Millisecond, P99: 7 * time.Millisecond, Max: 7 * time.Millisecond}},
		{"two", ms(2, 1), Summary{Count: 2, Min: time.Millisecond, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: 2 * time.Millisecond}},
		{"hundred", ms(hundred...), Summary{Count: 100, Min: time.Millisecond, P50: 50 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}},
		{"negative", ms(-1, 3, 5), Summary{Count: 3, Min: -time.Millisecond, P50: 3 * time.Millisecond, P99: 5 * time.Millisecond, Max: 5 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summarize(tt.in); got != tt.want {
				t.Fatalf("Summarize() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
