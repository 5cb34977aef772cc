package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	cgroups "github.com/containerd/cgroups/v3"
	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/pkg/oci"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"go.uber.org/zap"
)

// imageConfig reads the image's OCI config (entrypoint, cmd, env, ...).
func imageConfig(ctx context.Context, img containerd.Image) (ocispec.ImageConfig, error) {
	desc, err := img.Config(ctx)
	if err != nil {
		return ocispec.ImageConfig{}, fmt.Errorf("image %s config: %w", img.Name(), err)
	}
	b, err := content.ReadBlob(ctx, img.ContentStore(), desc)
	if err != nil {
		return ocispec.ImageConfig{}, fmt.Errorf("read image %s config: %w", img.Name(), err)
	}
	var oi ocispec.Image
	if err := json.Unmarshal(b, &oi); err != nil {
		return ocispec.ImageConfig{}, fmt.Errorf("decode image %s config: %w", img.Name(), err)
	}
	return oi.Config, nil
}

// processArgs applies Kubernetes' rules: command replaces the entrypoint
// (and drops the image's cmd), args replace the cmd.
func processArgs(ic ocispec.ImageConfig, command, args []string) []string {
	if len(command) > 0 {
		return append(append([]string(nil), command...), args...)
	}
	if len(args) > 0 {
		return append(append([]string(nil), ic.Entrypoint...), args...)
	}
	return append(append([]string(nil), ic.Entrypoint...), ic.Cmd...)
}

// ShimGroupAnnotation groups containers under one containerd-shim-runc-v2
// (its manager reads it from the OCI spec and starts a shim per group):
// every container of a pod is in its pod's group, as CRI groups a
// sandbox, and up to Options.PodsPerShim pods share a group (shimGroups).
const ShimGroupAnnotation = "io.containerd.runc.v2.group"

// specOpts turns a ContainerSpec into OCI spec options, applied over
// containerd's default Linux spec and the image config.
func (r *Containerd) specOpts(ctx context.Context, img containerd.Image, s ContainerSpec, group string) ([]oci.SpecOpts, error) {
	ic, err := imageConfig(ctx, img)
	if err != nil {
		return nil, err
	}
	args := processArgs(ic, s.Command, s.Args)
	if len(args) == 0 {
		return nil, fmt.Errorf("container %s: no command given and image %s has none", s.Name, s.Image)
	}
	opts := []oci.SpecOpts{
		oci.WithImageConfig(img),
		oci.WithProcessArgs(args...),
		oci.WithEnv(s.Env),
		oci.WithMounts(specMounts(s)),
		oci.WithAnnotations(map[string]string{ShimGroupAnnotation: group}),
	}
	opts = append(opts, namespaceOpts(s)...)
	if s.WorkingDir != "" {
		opts = append(opts, oci.WithProcessCwd(s.WorkingDir))
	}
	if s.TTY {
		opts = append(opts, oci.WithTTY)
	}
	if s.CgroupsPath != "" {
		opts = append(opts, oci.WithCgroup(s.CgroupsPath))
	}
	opts = append(opts, resourceOpts(s.Resources)...)
	opts = append(opts, r.oomScoreOpt(s))
	return append(opts, securityOpts(s.Security)...), nil
}

// namespaceOpts joins the pod's network namespace with a UTS namespace of
// its own (hostname s.Hostname, default PodName), or, for host network
// (NetnsPath ""), the host's network and UTS namespaces with no hostname
// set, as kubelet does for hostNetwork pods (runc refuses a hostname
// without a private UTS namespace).
func namespaceOpts(s ContainerSpec) []oci.SpecOpts {
	var opts []oci.SpecOpts
	if s.NetnsPath == "" {
		opts = []oci.SpecOpts{
			oci.WithHostNamespace(specs.NetworkNamespace),
			oci.WithHostNamespace(specs.UTSNamespace),
			oci.WithHostname(""),
		}
	} else {
		hostname := s.Hostname
		if hostname == "" {
			hostname = s.PodName
		}
		opts = []oci.SpecOpts{
			oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: s.NetnsPath}),
			oci.WithHostname(hostname),
		}
	}
	if cgroups.Mode() == cgroups.Unified {
		// a private cgroup namespace makes /sys/fs/cgroup the container's
		// own cgroup, as CRI does on cgroup v2 hosts
		opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.CgroupNamespace}))
	}
	if s.PIDNamespacePath != "" {
		opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.PIDNamespace, Path: s.PIDNamespacePath}))
	}
	return opts
}

func specMounts(s ContainerSpec) []specs.Mount {
	var ms []specs.Mount
	add := func(src, dst string, ro bool) {
		mode := "rw"
		if ro {
			mode = "ro"
		}
		ms = append(ms, specs.Mount{Type: "bind", Source: src, Destination: dst,
			Options: []string{"rbind", "rprivate", mode}})
	}
	// The container's own cgroups, read-only unless privileged, as CRI
	// mounts them (runc binds the container's cgroup on v1; on v2 the
	// container has its own cgroup namespace, see cgroupnsOpt).
	cgMode := "ro"
	if s.Security.Privileged {
		cgMode = "rw"
	}
	ms = append(ms, specs.Mount{Type: "cgroup", Source: "cgroup", Destination: "/sys/fs/cgroup",
		Options: []string{"nosuid", "noexec", "nodev", "relatime", cgMode}})
	if s.HostsPath != "" {
		add(s.HostsPath, "/etc/hosts", false)
	}
	if s.ResolvConfPath != "" {
		add(s.ResolvConfPath, "/etc/resolv.conf", false)
	}
	if s.HostnamePath != "" {
		add(s.HostnamePath, "/etc/hostname", false)
	}
	for _, m := range s.Mounts {
		add(m.HostPath, m.ContainerPath, m.ReadOnly)
	}
	return ms
}

// linuxResources is res as OCI cgroup settings (for a task update); zero
// fields stay unset.
func linuxResources(res Resources) *specs.LinuxResources {
	out := &specs.LinuxResources{CPU: &specs.LinuxCPU{}}
	if res.CPUShares > 0 {
		out.CPU.Shares = &res.CPUShares
	}
	if res.CPUQuota > 0 {
		period := res.CPUPeriod
		if period == 0 {
			period = 100000
		}
		out.CPU.Quota, out.CPU.Period = &res.CPUQuota, &period
	}
	if res.MemoryLimit > 0 {
		out.Memory = &specs.LinuxMemory{Limit: &res.MemoryLimit}
	}
	if len(res.Unified) > 0 {
		out.Unified = res.Unified
	}
	return out
}

func resourceOpts(res Resources) []oci.SpecOpts {
	var opts []oci.SpecOpts
	if res.CPUShares > 0 {
		opts = append(opts, oci.WithCPUShares(res.CPUShares))
	}
	if res.CPUQuota > 0 {
		period := res.CPUPeriod
		if period == 0 {
			period = 100000
		}
		opts = append(opts, oci.WithCPUCFS(res.CPUQuota, period))
	}
	if res.MemoryLimit > 0 {
		opts = append(opts, oci.WithMemoryLimit(uint64(res.MemoryLimit)))
	}
	if len(res.Unified) > 0 {
		opts = append(opts, withUnified(res.Unified))
	}
	return opts
}

// withUnified sets linux.resources.unified (cgroup v2 files).
func withUnified(u map[string]string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, sp *oci.Spec) error {
		if sp.Linux == nil {
			sp.Linux = &specs.Linux{}
		}
		if sp.Linux.Resources == nil {
			sp.Linux.Resources = &specs.LinuxResources{}
		}
		if sp.Linux.Resources.Unified == nil {
			sp.Linux.Resources.Unified = map[string]string{}
		}
		for k, v := range u {
			sp.Linux.Resources.Unified[k] = v
		}
		return nil
	}
}

// oomScoreOpt sets oom_score_adj, clamped to the agent's own score: without
// CAP_SYS_RESOURCE a process may not lower it (containerd's
// restrict_oom_score_adj does the same).
func (r *Containerd) oomScoreOpt(s ContainerSpec) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, sp *oci.Spec) error {
		if s.OOMScoreAdj == nil {
			return nil
		}
		v := *s.OOMScoreAdj
		if own, err := ownOOMScoreAdj(); err == nil && v < own {
			r.log.Info("clamping oom_score_adj to the agent's own", zap.String("container", s.ID),
				zap.Int("wanted", v), zap.Int("used", own))
			v = own
		}
		sp.Process.OOMScoreAdj = &v
		return nil
	}
}

func ownOOMScoreAdj() (int, error) {
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func capName(c string) string {
	c = strings.ToUpper(c)
	if c == "ALL" || strings.HasPrefix(c, "CAP_") {
		return c
	}
	return "CAP_" + c
}

func securityOpts(sec Security) []oci.SpecOpts {
	var opts []oci.SpecOpts
	if sec.Privileged {
		opts = append(opts, oci.WithPrivileged, oci.WithAllDevicesAllowed, oci.WithHostDevices,
			oci.WithMaskedPaths(nil), oci.WithReadonlyPaths(nil))
	} else {
		var add, drop []string
		for _, c := range sec.CapDrop {
			drop = append(drop, capName(c))
		}
		for _, c := range sec.CapAdd {
			add = append(add, capName(c))
		}
		for _, c := range drop {
			if c == "ALL" {
				opts = append(opts, oci.WithCapabilities(nil))
				drop = nil
				break
			}
		}
		if len(drop) > 0 {
			opts = append(opts, oci.WithDroppedCapabilities(drop))
		}
		if len(add) > 0 {
			opts = append(opts, oci.WithAddedCapabilities(add))
		}
	}
	opts = append(opts, userOpt(sec), groupsOpt(sec))
	if len(sec.Sysctls) > 0 {
		opts = append(opts, func(_ context.Context, _ oci.Client, _ *containers.Container, sp *oci.Spec) error {
			if sp.Linux == nil {
				sp.Linux = &specs.Linux{}
			}
			if sp.Linux.Sysctl == nil {
				sp.Linux.Sysctl = map[string]string{}
			}
			maps.Copy(sp.Linux.Sysctl, sec.Sysctls)
			return nil
		})
	}
	if sec.ReadOnlyRootFilesystem {
		opts = append(opts, oci.WithRootFSReadonly())
	}
	nnp := sec.AllowPrivilegeEscalation != nil && !*sec.AllowPrivilegeEscalation && !sec.Privileged
	opts = append(opts, func(_ context.Context, _ oci.Client, _ *containers.Container, sp *oci.Spec) error {
		sp.Process.NoNewPrivileges = nnp
		return nil
	})
	return opts
}

// groupsOpt sets the process's additional groups as containerd's CRI
// does: its primary group, with the Merge policy the groups of the
// image's /etc/group that list the user, then the supplemental groups.
func groupsOpt(sec Security) oci.SpecOpts {
	return func(ctx context.Context, c oci.Client, ctr *containers.Container, sp *oci.Spec) error {
		if sec.SupplementalGroupsStrict {
			sp.Process.User.AdditionalGids = []uint32{sp.Process.User.GID}
		} else if err := oci.WithAdditionalGIDs(strconv.FormatUint(uint64(sp.Process.User.UID), 10))(ctx, c, ctr, sp); err != nil {
			return fmt.Errorf("groups of the image's /etc/group: %w", err)
		}
		for _, g := range sec.SupplementalGroups {
			if !slices.Contains(sp.Process.User.AdditionalGids, uint32(g)) {
				sp.Process.User.AdditionalGids = append(sp.Process.User.AdditionalGids, uint32(g))
			}
		}
		return nil
	}
}

func userOpt(sec Security) oci.SpecOpts {
	return func(ctx context.Context, c oci.Client, ctr *containers.Container, sp *oci.Spec) error {
		switch {
		case sec.RunAsUser != nil && sec.RunAsGroup != nil:
			return oci.WithUIDGID(uint32(*sec.RunAsUser), uint32(*sec.RunAsGroup))(ctx, c, ctr, sp)
		case sec.RunAsUser != nil:
			// The group comes from the image's /etc/passwd (0 when absent).
			return oci.WithUserID(uint32(*sec.RunAsUser))(ctx, c, ctr, sp)
		case sec.RunAsGroup != nil:
			sp.Process.User.GID = uint32(*sec.RunAsGroup)
		}
		return nil
	}
}
