package cgroups

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// v1Managed are the v1 controllers orch creates and configures pod cgroups
// in (kubelet's cgroupfs driver uses all; runc creates the rest for its
// containers, and remove cleans every hierarchy).
var v1Managed = map[cgroup1.Name]bool{
	cgroup1.Cpu: true, cgroup1.Cpuacct: true, cgroup1.Cpuset: true,
	cgroup1.Memory: true, cgroup1.Pids: true,
}

type v1Backend struct {
	root   string   // /sys/fs/cgroup, parent of the v1 mounts
	mounts []string // every v1 hierarchy's mount point
	// unified are cgroup2 mounts beside the v1 ones (hybrid hosts:
	// /sys/fs/cgroup/unified). orch creates nothing there, but runc makes
	// the containers' cgroups in it too, so remove and children cover it.
	unified []string
}

var _ backend = (*v1Backend)(nil)

func newV1() (*v1Backend, error) {
	mounts, err := v1Mounts()
	if err != nil {
		return nil, err
	}
	if len(mounts) == 0 {
		return nil, fmt.Errorf("no cgroup v1 hierarchy mounted")
	}
	unified, err := unifiedMounts()
	if err != nil {
		return nil, err
	}
	return &v1Backend{root: filepath.Dir(mounts[0]), mounts: mounts, unified: unified}, nil
}

// all is every hierarchy pod cgroups can have directories in: the v1 ones
// and, on hybrid hosts, the unified one.
func (b *v1Backend) all() []string {
	return append(slices.Clone(b.mounts), b.unified...)
}

func (b *v1Backend) version() int { return 1 }

// hierarchy is cgroup1.Default limited to the managed controllers.
func (b *v1Backend) hierarchy() ([]cgroup1.Subsystem, error) {
	all, err := cgroup1.Default()
	if err != nil {
		return nil, err
	}
	var out []cgroup1.Subsystem
	for _, s := range all {
		if v1Managed[s.Name()] {
			out = append(out, s)
		}
	}
	return out, nil
}

func (b *v1Backend) opts() []cgroup1.InitOpts {
	return []cgroup1.InitOpts{
		cgroup1.WithHierarchy(b.hierarchy),
		func(c *cgroup1.InitConfig) error { c.InitCheck = cgroup1.AllowAny; return nil },
	}
}

func (b *v1Backend) ensure(group string, r Resources) error {
	// cgroup1.New creates the directories (cpuset copies cpus/mems from its
	// parent) and writes the values; run again it just rewrites them.
	if _, err := cgroup1.New(cgroup1.StaticPath(group), v1Spec(r), b.opts()...); err != nil {
		return fmt.Errorf("cgroup v1 %s: %w", group, err)
	}
	return nil
}

// v1Spec maps r onto the OCI resources cgroup1 writes: cpu.shares,
// cpu.cfs_period_us, cpu.cfs_quota_us, memory.limit_in_bytes, pids.max.
func v1Spec(r Resources) *specs.LinuxResources {
	s := &specs.LinuxResources{CPU: &specs.LinuxCPU{
		Shares: r.CPUShares, Quota: r.CPUQuota, Period: r.CPUPeriod,
	}}
	if r.Memory != nil {
		s.Memory = &specs.LinuxMemory{Limit: r.Memory}
	}
	if r.PidsLimit != nil {
		s.Pids = &specs.LinuxPids{Limit: r.PidsLimit}
	}
	return s
}

func (b *v1Backend) dir(controller, group string) string {
	return filepath.Join(b.root, controller, group)
}

func (b *v1Backend) exists(group string) bool {
	_, err := os.Stat(b.dir(string(cgroup1.Memory), group))
	return err == nil
}

func (b *v1Backend) remove(group string) error {
	var errs []error
	for _, m := range b.all() {
		if err := rmdirTree(filepath.Join(m, group)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (b *v1Backend) children(group string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, m := range b.all() {
		names, err := subdirs(filepath.Join(m, group))
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func (b *v1Backend) addProc(group string, pid int) error {
	cg, err := cgroup1.Load(cgroup1.StaticPath(group), b.opts()...)
	if err != nil {
		return fmt.Errorf("load cgroup v1 %s: %w", group, err)
	}
	if err := cg.AddProc(uint64(pid)); err != nil {
		return fmt.Errorf("add pid %d to %s: %w", pid, group, err)
	}
	return nil
}

func (b *v1Backend) procs(group string) ([]int, error) {
	return readPids(filepath.Join(b.dir(string(cgroup1.Memory), group), "cgroup.procs"))
}

func (b *v1Backend) oomKills(group string) (uint64, error) {
	file := filepath.Join(b.dir(string(cgroup1.Memory), group), "memory.oom_control")
	n, err := readKey(file, "oom_kill")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%s: %w", group, ErrNotFound)
	}
	return n, err
}
