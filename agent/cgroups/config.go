package cgroups

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Defaults.
const (
	DefaultRoot          = "orch"
	DefaultMountpoint    = "/sys/fs/cgroup"
	DefaultRemoveTimeout = 10 * time.Second
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNotFound: the pod has no cgroup (UpdatePod before EnsurePod).
	ErrNotFound = errors.New("pod cgroup not found")
	// ErrBusy: a pod cgroup still holds tasks after the remove timeout.
	ErrBusy = errors.New("cgroup still has tasks")
	// ErrConfig: the Config is invalid.
	ErrConfig = errors.New("invalid cgroups config")
)

// Config configures a Manager.
type Config struct {
	// Root is the parent cgroup relative to each hierarchy's root
	// ("orch" unless set; tests use a unique name).
	Root string
	// NodeAllocatable limits the kubepods cgroup: cpu becomes cpu.shares,
	// memory the memory limit; absent ones are left unlimited.
	NodeAllocatable corev1.ResourceList
	// PodPidsLimit, when > 0, is each pod cgroup's pids limit.
	PodPidsLimit int64
	// Version forces cgroup v1 or v2 (tests); 0 detects it.
	Version int
	// Mountpoint is the cgroup v2 mount (default /sys/fs/cgroup). v1
	// hierarchies are found in /proc/self/mountinfo.
	Mountpoint string
	// RemoveTimeout bounds how long RemovePod waits for tasks to drain.
	RemoveTimeout time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if c.Root == "" {
		c.Root = DefaultRoot
	}
	clean := path.Clean(strings.Trim(c.Root, "/"))
	if clean == "." || strings.HasPrefix(clean, "..") || strings.Contains(clean, "/../") {
		return c, fmt.Errorf("%w: root %q must be a relative cgroup path", ErrConfig, c.Root)
	}
	c.Root = clean
	if c.Mountpoint == "" {
		c.Mountpoint = DefaultMountpoint
	}
	if c.RemoveTimeout <= 0 {
		c.RemoveTimeout = DefaultRemoveTimeout
	}
	if c.Version != 0 && c.Version != 1 && c.Version != 2 {
		return c, fmt.Errorf("%w: version %d (want 0, 1 or 2)", ErrConfig, c.Version)
	}
	return c, nil
}
