package kubelet

import (
	"context"

	"fmt"
	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/agent/cgroups"
	"github.com/orch/orch/agent/envvars"
	"github.com/orch/orch/agent/images"
	"github.com/orch/orch/agent/lifecycle"
	"github.com/orch/orch/agent/prober"
	"github.com/orch/orch/agent/runtime"
	"github.com/orch/orch/agent/volumes"
)

// Images makes a container's image available: Ref names it for the runtime,
// ID is the imageID reported in the container status.
type Images interface {
	// EnsureImage pulls with auth (from imagePullSecrets; nil = anonymous
	// or registries.yaml) when the policy asks for it.
	EnsureImage(ctx context.Context, ref string, policy corev1.PullPolicy, auth *images.Auth) (ImageInfo, error)
	// Present says whether ref is in the store already (no pull needed
	// unless the policy is Always).
	Present(ctx context.Context, ref string) bool
}

// ImageInfo identifies an image in the runtime's store.
type ImageInfo struct {
	Ref string // normalized reference, e.g. docker.io/library/nginx:1.25
	ID  string // imageID: <ref>@sha256:...
	// User is the image config's user ("", "1000", "app", "1000:1000"),
	// checked against runAsNonRoot.
	User string
}

// Volumes sets up and tears down a pod's volumes.
type Volumes interface {
	// SetupPod prepares (or refreshes) every volume of the pod and returns
	// them by volume name.
	SetupPod(ctx context.Context, pod *corev1.Pod) (map[string]volumes.Volume, error)
	// TeardownPod removes whatever SetupPod made for the pod UID.
	TeardownPod(ctx context.Context, uid types.UID) error
}

// Cgroups places pods in cgroups (agent/cgroups.Manager).
type Cgroups interface {
	EnsurePod(pod *corev1.Pod) (string, error)
	RemovePod(ctx context.Context, uid types.UID) error
	PodCgroups() ([]types.UID, error)
	OOMScoreAdj(want int) int
	// ContainerUnified is the cgroup v2 unified map every container gets
	// (memory.oom.group=1); nil on v1.
	ContainerUnified() map[string]string
}

var _ Cgroups = (*cgroups.Manager)(nil)

// ImageService adapts agent/images.Service to Images; Client and Namespace
// answer Present.
type ImageService struct {
	S         *images.Service
	Client    *containerd.Client
	Namespace string
}

var _ Images = ImageService{}

// EnsureImage implements Images.
func (a ImageService) EnsureImage(ctx context.Context, ref string, policy corev1.PullPolicy, auth *images.Auth) (ImageInfo, error) {
	img, err := a.S.EnsureImage(ctx, ref, policy, auth)
	if err != nil {
		return ImageInfo{}, err
	}
	info := ImageInfo{Ref: img.Name(), ID: img.Name() + "@" + img.Target().Digest.String()}
	oi, err := img.Spec(namespaces.WithNamespace(ctx, a.Namespace))
	if err != nil {
		return ImageInfo{}, fmt.Errorf("image %s config: %w", ref, err)
	}
	info.User = oi.Config.User
	return info, nil
}

// Present implements Images.
func (a ImageService) Present(ctx context.Context, ref string) bool {
	name, err := images.Normalize(ref)
	if err != nil || a.Client == nil {
		return false
	}
	_, err = a.Client.GetImage(namespaces.WithNamespace(ctx, a.Namespace), name)
	return err == nil
}

// DirVolumes is the agent's own minimal volume support until agent/volumes
// is wired in: emptyDir (a directory under the pod's dir) and hostPath.
// Other volume types are an error.
type DirVolumes struct{ PodsDir string }

var _ Volumes = DirVolumes{}

// SetupPod implements Volumes.
func (d DirVolumes) SetupPod(_ context.Context, pod *corev1.Pod) (map[string]volumes.Volume, error) {
	out := map[string]volumes.Volume{}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.EmptyDir != nil:
			p := filepath.Join(d.PodsDir, string(pod.UID), "volumes", "kubernetes.io~empty-dir", v.Name)
			if err := os.MkdirAll(p, 0o777); err != nil {
				return nil, fmt.Errorf("volume %q: %w", v.Name, err)
			}
			_ = os.Chmod(p, 0o777)
			out[v.Name] = volumes.Volume{HostPath: p}
		case v.HostPath != nil:
			if v.HostPath.Type != nil && *v.HostPath.Type == corev1.HostPathDirectoryOrCreate {
				if err := os.MkdirAll(v.HostPath.Path, 0o755); err != nil {
					return nil, fmt.Errorf("volume %q: %w", v.Name, err)
				}
			}
			out[v.Name] = volumes.Volume{HostPath: v.HostPath.Path}
		default:
			return nil, fmt.Errorf("volume %q: type not supported by this agent yet", v.Name)
		}
	}
	return out, nil
}

// TeardownPod implements Volumes.
func (d DirVolumes) TeardownPod(_ context.Context, uid types.UID) error {
	return os.RemoveAll(filepath.Join(d.PodsDir, string(uid), "volumes"))
}

// PodCerts requests the certificates of podCertificate projections
// (agent/certs.PodCerts).
type PodCerts interface {
	// Run works until ctx ends, calling resync for a pod whose
	// certificate request changed.
	Run(ctx context.Context, resync func(namespace, name string))
	// Forget drops the state of a pod that was cleaned up.
	Forget(uid types.UID)
}

// VolumeManager adapts agent/volumes' Manager to Volumes; Src reads the
// ConfigMaps and Secrets the pods reference.
type VolumeManager struct {
	M   *volumes.Manager
	Src envvars.Sources
}

var _ Volumes = VolumeManager{}

// SetupPod implements Volumes.
func (v VolumeManager) SetupPod(ctx context.Context, pod *corev1.Pod) (map[string]volumes.Volume, error) {
	return v.M.SetupPod(ctx, pod, v.Src)
}

// TeardownPod implements Volumes.
func (v VolumeManager) TeardownPod(ctx context.Context, uid types.UID) error {
	return v.M.TeardownPod(ctx, uid)
}

// Probes reports container readiness and startup (agent/prober through
// ProberProbes). The pod loop tells it which containers run.
type Probes interface {
	// SyncPod tells the prober the pod's IP and running containers by name.
	SyncPod(pod *corev1.Pod, podIP string, running map[string]runtime.ContainerStatus)
	// RemovePod forgets the pod.
	RemovePod(uid types.UID)
	// Ready and Started report a running container's probe state.
	Ready(uid types.UID, container, id string) bool
	Started(uid types.UID, container, id string) bool
	// LivenessFailed reports that the container must be restarted: its
	// liveness or startup probe failed.
	LivenessFailed(uid types.UID, container, id string) (prober.Kind, bool)
	// Updates delivers probe result changes (nil: none).
	Updates() <-chan prober.Update
}

// NoProbes treats every running container as started and ready.
type NoProbes struct{}

var _ Probes = NoProbes{}

func (NoProbes) SyncPod(*corev1.Pod, string, map[string]runtime.ContainerStatus) {}
func (NoProbes) RemovePod(types.UID)                                             {}
func (NoProbes) Ready(types.UID, string, string) bool                            { return true }
func (NoProbes) Started(types.UID, string, string) bool                          { return true }
func (NoProbes) LivenessFailed(types.UID, string, string) (prober.Kind, bool)    { return 0, false }
func (NoProbes) Updates() <-chan prober.Update                                   { return nil }

// ProberProbes adapts agent/prober's Manager to Probes.
type ProberProbes struct{ M *prober.Manager }

var _ Probes = ProberProbes{}

// SyncPod implements Probes.
func (p ProberProbes) SyncPod(pod *corev1.Pod, podIP string, running map[string]runtime.ContainerStatus) {
	r := make(map[string]prober.Running, len(running))
	for name, c := range running {
		r[name] = prober.Running{ID: c.ID, StartedAt: c.StartedAt}
	}
	p.M.SyncPod(pod, podIP, r)
}

// RemovePod implements Probes.
func (p ProberProbes) RemovePod(uid types.UID) { p.M.RemovePod(uid) }

// Ready implements Probes.
func (p ProberProbes) Ready(uid types.UID, c, id string) bool {
	return p.M.ContainerID(uid, c) == id && p.M.Readiness(uid, c)
}

// Started implements Probes.
func (p ProberProbes) Started(uid types.UID, c, id string) bool {
	return p.M.ContainerID(uid, c) == id && p.M.Started(uid, c)
}

// LivenessFailed implements Probes.
func (p ProberProbes) LivenessFailed(uid types.UID, c, id string) (prober.Kind, bool) {
	if p.M.ContainerID(uid, c) != id {
		return 0, false
	}
	for _, k := range []prober.Kind{prober.Startup, prober.Liveness} {
		if p.M.Result(uid, c, k) == prober.Failure {
			return k, true
		}
	}
	return 0, false
}

// Updates implements Probes.
func (p ProberProbes) Updates() <-chan prober.Update { return p.M.Updates() }

// Hooks runs lifecycle hooks (agent/lifecycle.Runner); optional.
type Hooks interface {
	// PostStart runs c's postStart hook; an error means kill the container.
	PostStart(ctx context.Context, pod *corev1.Pod, c *corev1.Container, containerID, podIP string) error
	// PreStop runs c's preStop hook and returns the grace left for the stop.
	PreStop(ctx context.Context, pod *corev1.Pod, c *corev1.Container, containerID, podIP string, grace time.Duration) time.Duration
}

var _ Hooks = (*lifecycle.Runner)(nil)
