package kubelet

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/cgroups"
	"github.com/orch/orch/agent/envvars"
	"github.com/orch/orch/agent/qos"
	"github.com/orch/orch/agent/runtime"
	"github.com/orch/orch/agent/volumes"
)

// containerSpec turns a pod's container into the runtime's spec.
func (k *Kubelet) containerSpec(ctx context.Context, pod *corev1.Pod, st *podState, env *podEnv, c *corev1.Container, restartCount int) (runtime.ContainerSpec, error) {
	id := runtime.ContainerID(string(pod.UID), c.Name, restartCount)
	vars, err := k.cfg.Env(ctx, pod, c, st.podIP)
	if err != nil {
		return runtime.ContainerSpec{}, fmt.Errorf("container %s environment: %w", c.Name, err)
	}
	cmd, args := envvars.ExpandCommand(c.Command, c.Args, vars)
	mounts, err := containerMounts(pod, c, env.volumes, vars)
	if err != nil {
		return runtime.ContainerSpec{}, err
	}
	tmount, err := k.terminationMount(pod, c, restartCount)
	if err != nil {
		return runtime.ContainerSpec{}, err
	}
	mounts = append(mounts, tmount...)
	host, _ := podHostname(pod, k.cfg.DNS.ClusterDomain)
	if pod.Spec.HostNetwork {
		host = "" // no NetnsPath: the runtime shares the host's UTS namespace
	}
	oom := k.cfg.Cgroups.OOMScoreAdj(qos.OOMScoreAdj(pod, c, k.cfg.MemoryCapacity))
	pidns, err := k.targetPIDNamespace(ctx, pod, c.Name)
	if err != nil {
		return runtime.ContainerSpec{}, err
	}
	return runtime.ContainerSpec{
		PIDNamespacePath: pidns,
		ID:               id, PodUID: string(pod.UID), PodName: pod.Name, PodNamespace: pod.Namespace, Name: c.Name, RestartCount: restartCount,
		Image: st.images[c.Name].Ref, Command: cmd, Args: args, Env: vars, WorkingDir: c.WorkingDir, TTY: c.TTY, Stdin: c.Stdin, StdinOnce: c.StdinOnce,
		Mounts: mounts, HostsPath: env.files.Hosts, ResolvConfPath: env.files.Resolv, HostnamePath: env.files.Hostname,
		NetnsPath: env.netns, Hostname: host, CgroupsPath: cgroups.ContainerCgroupsPath(env.parent, id),
		Resources: k.withUnified(containerResources(c)), OOMScoreAdj: &oom, Security: security(pod, c),
	}, nil
}

// targetPIDNamespace is the PID namespace of the running container an
// ephemeral container targets (targetContainerName), or "".
func (k *Kubelet) targetPIDNamespace(ctx context.Context, pod *corev1.Pod, name string) (string, error) {
	for _, ec := range pod.Spec.EphemeralContainers {
		if ec.Name != name || ec.TargetContainerName == "" {
			continue
		}
		list, err := k.cfg.Runtime.ListContainers(ctx, string(pod.UID))
		if err != nil {
			return "", err
		}
		if v := groupContainers(list)[ec.TargetContainerName]; v.running() && v.latest.Pid > 0 {
			return fmt.Sprintf("/proc/%d/ns/pid", v.latest.Pid), nil
		}
		return "", fmt.Errorf("target container %s of ephemeral container %s is not running", ec.TargetContainerName, name)
	}
	return "", nil
}

func containerMounts(pod *corev1.Pod, c *corev1.Container, vols map[string]volumes.Volume, vars []string) ([]runtime.Mount, error) {
	ms, err := volumes.ContainerMounts(vols, c, vars)
	if err != nil {
		return nil, configError{fmt.Errorf("container %s mounts: %w", c.Name, err)}
	}
	out := make([]runtime.Mount, 0, len(ms))
	for _, m := range ms {
		out = append(out, runtime.Mount{HostPath: m.HostPath, ContainerPath: m.ContainerPath, ReadOnly: m.ReadOnly})
	}
	return out, nil
}

// APISources reads ConfigMaps and Secrets from the API (the node authorizer
// allows those its pods reference) and mints the tokens of projected
// serviceAccountToken volumes (TokenRequest, bound to the pod).
func APISources(client kubernetes.Interface) envvars.Sources {
	return tokenSources{apiSources: apiSources{client}, tokenManager: newTokenManager(client)}
}

// CertSources are APISources that also answer clusterTrustBundle and
// podCertificate projections (agent/certs).
func CertSources(client kubernetes.Interface, bundles volumes.TrustBundleSource, podCerts volumes.PodCertificateSource) envvars.Sources {
	return certSources{tokenSources: tokenSources{apiSources: apiSources{client}, tokenManager: newTokenManager(client)},
		TrustBundleSource: bundles, PodCertificateSource: podCerts}
}

type certSources struct {
	tokenSources
	volumes.TrustBundleSource
	volumes.PodCertificateSource
}

// withUnified adds the cgroup v2 settings every container gets.
func (k *Kubelet) withUnified(r runtime.Resources) runtime.Resources {
	r.Unified = k.cfg.Cgroups.ContainerUnified()
	return r
}

func containerResources(c *corev1.Container) runtime.Resources {
	r := runtime.Resources{CPUShares: qos.CPUShares(qos.MilliCPU(c.Resources.Requests)), CPUPeriod: 100000}
	if c.Resources.Requests.Cpu().IsZero() && !c.Resources.Limits.Cpu().IsZero() {
		r.CPUShares = qos.CPUShares(qos.MilliCPU(c.Resources.Limits))
	}
	if lim := qos.MilliCPU(c.Resources.Limits); lim > 0 {
		r.CPUQuota = qos.CFSQuota(lim, 100000)
	}
	r.MemoryLimit = qos.MemoryBytes(c.Resources.Limits)
	return r
}

// podSysctls are the pod's sysctls (admission allowed them) for the
// namespaces it does not share with the host.
func podSysctls(pod *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, s := range pod.Spec.SecurityContext.Sysctls {
		name := strings.ReplaceAll(s.Name, "/", ".")
		if (strings.HasPrefix(name, "net.") && pod.Spec.HostNetwork) || (strings.HasPrefix(name, "kernel.") && pod.Spec.HostIPC) {
			continue
		}
		out[name] = s.Value
	}
	return out
}

// configError is a container that cannot be created as configured (a bad
// subPath, say): kubelet's CreateContainerConfigError, not a runtime error.
type configError struct{ error }

func (e configError) Unwrap() error { return e.error }

func security(pod *corev1.Pod, c *corev1.Container) runtime.Security {
	var s runtime.Security
	if psc := pod.Spec.SecurityContext; psc != nil {
		s.RunAsUser, s.RunAsGroup = psc.RunAsUser, psc.RunAsGroup
		s.SupplementalGroups = slices.Clone(psc.SupplementalGroups)
		if psc.FSGroup != nil { // kubelet adds fsGroup to the supplemental groups
			s.SupplementalGroups = append(s.SupplementalGroups, *psc.FSGroup)
		}
		s.SupplementalGroupsStrict = ptr.Deref(psc.SupplementalGroupsPolicy, "") == corev1.SupplementalGroupsPolicyStrict
		s.Sysctls = podSysctls(pod)
	}
	sc := c.SecurityContext
	if sc == nil {
		return s
	}
	if sc.RunAsUser != nil {
		s.RunAsUser = sc.RunAsUser
	}
	if sc.RunAsGroup != nil {
		s.RunAsGroup = sc.RunAsGroup
	}
	s.Privileged = sc.Privileged != nil && *sc.Privileged
	s.ReadOnlyRootFilesystem = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	s.AllowPrivilegeEscalation = sc.AllowPrivilegeEscalation
	if caps := sc.Capabilities; caps != nil {
		for _, c := range caps.Add {
			s.CapAdd = append(s.CapAdd, string(c))
		}
		for _, c := range caps.Drop {
			s.CapDrop = append(s.CapDrop, string(c))
		}
	}
	return s
}

// apiSources reads ConfigMaps and Secrets from the API (the node
// authorizer allows those its pods reference).
type apiSources struct{ client kubernetes.Interface }

func (a apiSources) GetConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	return a.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

func (a apiSources) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return a.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

// apiEnv resolves environments with agent/envvars over the API, with the
// service link variables of the pod's namespace.
func (k *Kubelet) apiEnv() func(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIP string) ([]string, error) {
	src := apiSources{k.cfg.Client}
	return func(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIP string) ([]string, error) {
		svcs, _ := k.services.List(everything)
		return envvars.Resolve(ctx, pod, c, src, envvars.Inputs{PodIP: podIP, HostIP: k.cfg.HostIP,
			NodeName: k.cfg.NodeName, Allocatable: k.cfg.Allocatable,
			ServiceEnv: envvars.ServiceEnv(svcs, pod.Namespace, pod.Spec.EnableServiceLinks)})
	}
}

func (k *Kubelet) podDir(uid types.UID) string { return filepath.Join(k.cfg.PodsDir, string(uid)) }
