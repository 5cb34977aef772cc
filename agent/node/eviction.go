package node

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// ParseThresholds reads kubelet's --eviction-hard syntax
// ("memory.available<100Mi,nodefs.available<10%"). Signals left out keep
// DefaultThresholds; "<0%" (or "<0") turns a signal off. memory.available
// takes a quantity, the filesystem, inode and PID signals a percentage.
// The empty string is DefaultThresholds.
func ParseThresholds(spec string) (Thresholds, error) {
	t := DefaultThresholds
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		signal, value, ok := strings.Cut(item, "<")
		if !ok {
			return t, fmt.Errorf("eviction threshold %q: want <signal><<value>, e.g. nodefs.available<10%%", item)
		}
		if err := t.set(strings.TrimSpace(signal), strings.TrimSpace(value)); err != nil {
			return t, fmt.Errorf("eviction threshold %q: %w", item, err)
		}
	}
	return t, nil
}

func (t *Thresholds) set(signal, value string) error {
	if signal == "memory.available" {
		q, err := resource.ParseQuantity(value)
		if err != nil || q.Sign() < 0 {
			return fmt.Errorf("memory.available takes a quantity such as 100Mi, not %q", value)
		}
		t.MemoryAvailable = q.Value()
		return nil
	}
	field := map[string]*float64{
		"nodefs.available": &t.NodeFSAvailable, "imagefs.available": &t.ImageFSAvailable,
		"nodefs.inodesFree": &t.InodesFree, "imagefs.inodesFree": &t.InodesFree, "pid.available": &t.PIDAvailable,
	}[signal]
	if field == nil {
		return fmt.Errorf("unknown signal %q (memory.available, nodefs.available, imagefs.available, nodefs.inodesFree, imagefs.inodesFree, pid.available)", signal)
	}
	frac, err := percent(value)
	if err != nil {
		return fmt.Errorf("%s: %w", signal, err)
	}
	*field = frac
	return nil
}

// percent parses "10%" (or "0") into 0.10.
func percent(v string) (float64, error) {
	if v == "0" {
		return 0, nil
	}
	num, ok := strings.CutSuffix(v, "%")
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || f < 0 || f > 100 {
		return 0, fmt.Errorf("want a percentage between 0%% and 100%%, not %q", v)
	}
	return f / 100, nil
}
