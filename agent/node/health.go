package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Thresholds are the hard eviction thresholds the pressure conditions are
// computed from. DefaultThresholds are kubelet's Linux defaults
// (memory.available<100Mi, nodefs.available<10%, imagefs.available<15%,
// nodefs.inodesFree<5%, imagefs.inodesFree<5%); kubelet sets no default
// for pid.available, orch uses 5% of the PID limit.
type Thresholds struct {
	MemoryAvailable  int64   // bytes
	NodeFSAvailable  float64 // fraction of the filesystem
	ImageFSAvailable float64
	InodesFree       float64 // fraction of inodes, nodefs and imagefs
	PIDAvailable     float64 // fraction of the PID limit
}

// DefaultThresholds are kubelet's defaults (see Thresholds).
var DefaultThresholds = Thresholds{MemoryAvailable: 100 << 20, NodeFSAvailable: 0.10, ImageFSAvailable: 0.15,
	InodesFree: 0.05, PIDAvailable: 0.05}

// FSStats is the free space of one filesystem.
type FSStats struct{ Avail, Total, InodesFree, Inodes uint64 }

// Sample is one measurement of the node's resources; a zero total means
// "not measured" and never signals pressure.
type Sample struct {
	MemAvailable    int64 // bytes; -1 not measured
	NodeFS, ImageFS FSStats
	PIDs, PIDLimit  int64
}

// Pressure evaluates s against t.
func (t Thresholds) Pressure(s Sample) (memory, disk, pid bool) {
	memory = s.MemAvailable >= 0 && s.MemAvailable < t.MemoryAvailable
	low := func(fs FSStats, frac float64) bool {
		return (fs.Total > 0 && float64(fs.Avail) < frac*float64(fs.Total)) ||
			(fs.Inodes > 0 && float64(fs.InodesFree) < t.InodesFree*float64(fs.Inodes))
	}
	disk = low(s.NodeFS, t.NodeFSAvailable) || low(s.ImageFS, t.ImageFSAvailable)
	pid = s.PIDLimit > 0 && float64(s.PIDLimit-s.PIDs) < t.PIDAvailable*float64(s.PIDLimit)
	return memory, disk, pid
}

// HostSample measures the host: MemAvailable of <proc>/meminfo, statfs of
// nodeFS and imageFS, and the threads in use (<proc>/loadavg) against the
// PID limit (the lower of kernel/pid_max and kernel/threads-max). proc is
// normally /proc.
func HostSample(proc, nodeFS, imageFS string) Sample {
	s := Sample{MemAvailable: -1}
	if b, err := os.ReadFile(filepath.Join(proc, "meminfo")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil {
					s.MemAvailable = kb * 1024
				}
			}
		}
	}
	s.NodeFS = statFS(nodeFS)
	if imageFS != "" {
		s.ImageFS = statFS(imageFS)
	}
	s.PIDs, s.PIDLimit = pidUsage(proc)
	return s
}

func statFS(path string) FSStats {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return FSStats{}
	}
	return FSStats{Avail: st.Bavail * uint64(st.Bsize), Total: st.Blocks * uint64(st.Bsize), InodesFree: st.Ffree, Inodes: st.Files}
}

// pidUsage returns the scheduling entities in use (4th field of loadavg,
// "running/total") and the PID limit.
func pidUsage(proc string) (used, limit int64) {
	readInt := func(name string) int64 {
		b, err := os.ReadFile(filepath.Join(proc, name))
		if err != nil {
			return 0
		}
		v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v
	}
	limit = readInt("sys/kernel/pid_max")
	if tm := readInt("sys/kernel/threads-max"); tm > 0 && (limit == 0 || tm < limit) {
		limit = tm
	}
	b, err := os.ReadFile(filepath.Join(proc, "loadavg"))
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return 0, 0
	}
	_, total, ok := strings.Cut(f[3], "/")
	if !ok {
		return 0, 0
	}
	used, err = strconv.ParseInt(total, 10, 64)
	if err != nil {
		return 0, 0
	}
	return used, limit
}

// Checker computes the node's Health: Ready needs the container runtime to
// answer and the pod network (the bridge) to be in place, as kubelet needs
// the runtime and its network plugin; the pressure conditions come from
// HostSample against Thresholds.
type Checker struct {
	Log        *zap.Logger
	Runtime    func(ctx context.Context) error // containerd answers (e.g. Version)
	Network    func() error                    // the bridge is there, up, with its gateway
	Repair     func() error                    // optional: recreate the pod network
	Proc       string                          // default /proc
	NodeFS     string                          // the data dir
	ImageFS    string                          // containerd's root; "" is NodeFS
	Thresholds Thresholds                      // zero: DefaultThresholds
	Timeout    time.Duration                   // for Runtime; default 5s
}

// Health implements the health func of Heartbeat.
func (c *Checker) Health(ctx context.Context) Health {
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	var errs []error
	if c.Runtime != nil {
		timeout := c.Timeout
		if timeout <= 0 {
			timeout = 5 * time.Second
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		err := c.Runtime(rctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			c.Log.Warn("container runtime does not answer", zap.Error(err))
			errs = append(errs, errors.New("container runtime is down"))
		}
	}
	if c.Network != nil {
		if err := c.Network(); err != nil {
			errs = append(errs, fmt.Errorf("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:%w", err))
			c.repair(err)
		}
	}
	var h Health
	if agg := utilerrors.NewAggregate(errs); agg != nil {
		h.NotReady = agg.Error()
	}
	t := c.Thresholds
	if t == (Thresholds{}) {
		t = DefaultThresholds
	}
	proc := c.Proc
	if proc == "" {
		proc = "/proc"
	}
	h.MemoryPressure, h.DiskPressure, h.PIDPressure = t.Pressure(HostSample(proc, c.NodeFS, c.ImageFS))
	return h
}

func (c *Checker) repair(cause error) {
	if c.Repair == nil {
		return
	}
	c.Log.Warn("pod network broken; setting it up again", zap.Error(cause))
	if err := c.Repair(); err != nil {
		c.Log.Error("repairing the pod network failed", zap.Error(err))
	}
}
