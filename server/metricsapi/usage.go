package metricsapi

import (
	"errors"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Point is one reading of a node or container.
type Point struct {
	// Start is when the node or container started: its cumulative CPU was
	// zero then (zero when unknown).
	Start time.Time
	// Time is when the reading was taken.
	Time time.Time
	// CPU is the cumulative CPU time since Start, in nanoseconds.
	CPU uint64
	// Memory is the working set in bytes.
	Memory uint64
}

// Usage is what a pair of readings gives: the CPU rate and memory, at the
// last reading's time, over the window between the two.
type Usage struct {
	Resources corev1.ResourceList
	Time      time.Time
	Window    time.Duration
}

var (
	errStartWentBack = errors.New("unexpected decrease in start time of node or container")
	errCPUWentBack   = errors.New("unexpected decrease in cumulative CPU usage")
	errNoWindow      = errors.New("readings have no time between them")
)

// usageOf computes usage from two readings of the same node or container,
// as metrics-server's resourceUsage: CPU in nanocores (DecimalSI), memory
// in bytes (BinarySI).
func usageOf(last, prev Point) (Usage, error) {
	switch {
	case last.Start.Before(prev.Start):
		return Usage{}, errStartWentBack
	case last.CPU < prev.CPU:
		return Usage{}, errCPUWentBack
	case !last.Time.After(prev.Time):
		return Usage{}, errNoWindow
	}
	window := last.Time.Sub(prev.Time)
	rate := float64(last.CPU-prev.CPU) / window.Seconds()
	return Usage{
		Resources: corev1.ResourceList{
			corev1.ResourceCPU:    uint64Quantity(uint64(rate), resource.DecimalSI, -9),
			corev1.ResourceMemory: uint64Quantity(last.Memory, resource.BinarySI, 0),
		},
		Time:   last.Time,
		Window: window,
	}, nil
}

// uint64Quantity is a Quantity of val×10^scale; values beyond int64 lose a
// decimal digit, as metrics-server's.
func uint64Quantity(val uint64, format resource.Format, scale resource.Scale) resource.Quantity {
	q := *resource.NewScaledQuantity(int64(val), scale)
	if val > math.MaxInt64 {
		q = *resource.NewScaledQuantity(int64(val/10), scale+1)
	}
	q.Format = format
	return q
}
