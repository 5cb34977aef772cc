package metricsapi

import (
	"errors"
	"testing"
	"time"
)

func TestUsageOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	start := time.Unix(900, 0)
	tests := []struct {
		name       string
		last, prev Point
		cpu, mem   string
		window     time.Duration
		err        error
	}{
		{"one core over 15s", Point{Start: start, Time: t0.Add(15 * time.Second), CPU: 20e9, Memory: 4 << 20},
			Point{Start: start, Time: t0, CPU: 5e9}, "1", "4Mi", 15 * time.Second, nil},
		{"quarter core over 10s", Point{Start: start, Time: t0.Add(10 * time.Second), CPU: 2.5e9, Memory: 1000},
			Point{Start: start, Time: t0}, "250m", "1k", 10 * time.Second, nil},
		{"idle", Point{Start: start, Time: t0.Add(15 * time.Second), CPU: 7, Memory: 1},
			Point{Start: start, Time: t0, CPU: 7}, "0", "1", 15 * time.Second, nil},
		{"counter went back", Point{Start: start, Time: t0.Add(time.Second), CPU: 1},
			Point{Start: start, Time: t0, CPU: 2}, "", "", 0, errCPUWentBack},
		{"start went back", Point{Start: start, Time: t0.Add(time.Second), CPU: 3},
			Point{Start: start.Add(time.Second), Time: t0, CPU: 2}, "", "", 0, errStartWentBack},
		{"same time", Point{Time: t0, CPU: 3}, Point{Time: t0, CPU: 2}, "", "", 0, errNoWindow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := usageOf(tc.last, tc.prev)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			cpu, mem := u.Resources["cpu"], u.Resources["memory"]
			if cpu.String() != tc.cpu || mem.String() != tc.mem || u.Window != tc.window || !u.Time.Equal(tc.last.Time) {
				t.Errorf("usage = cpu %s memory %s window %s time %s, want %s %s %s %s", cpu.String(), mem.String(), u.Window, u.Time,
					tc.cpu, tc.mem, tc.window, tc.last.Time)
			}
		})
	}
}

func TestUint64QuantityHuge(t *testing.T) {
	q := uint64Quantity(1<<63+10, "DecimalSI", -9)
	if q.Sign() <= 0 {
		t.Errorf("quantity of a value beyond int64 = %s", q.String())
	}
}
