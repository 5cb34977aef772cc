package volumes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/agent/envvars"
)

// Sources gives access to the ConfigMaps and Secrets the pod references
// (NotFound as an apierrors NotFound). It is the same interface envvars uses.
type Sources = envvars.Sources

// TokenSource may also be implemented by the Sources passed in: it mints
// the token of a projected serviceAccountToken source. Without it such a
// source is an error.
type TokenSource interface {
	ServiceAccountToken(ctx context.Context, pod *corev1.Pod, proj *corev1.ServiceAccountTokenProjection) ([]byte, error)
}

// ErrUnsupported is returned for volume types this node cannot provide.
var ErrUnsupported = errors.New("unsupported volume type")

// Config configures a Manager.
type Config struct {
	// PodsDir is <data-dir>/agent/pods; a pod's volumes live under
	// <PodsDir>/<uid>/volumes.
	PodsDir string
	// Allocatable returns the node's allocatable resources (optional): it
	// bounds Memory emptyDirs and defaults resourceFieldRef limits.
	Allocatable func() corev1.ResourceList
	// Claims reads PersistentVolumeClaims and PersistentVolumes (optional:
	// without it persistentVolumeClaim volumes are unsupported).
	Claims ClaimSource
	// StorageDir is this node's local-path storage dir (agent/localpath):
	// local-path volumes inside it are created mode 0777.
	StorageDir string
	// NodeName is this node: a local-path volume of another node is an error.
	NodeName string
	// Images mounts image volumes (optional: without it they are
	// unsupported).
	Images ImageVolumes
}

// Volume is a prepared pod volume: the host path to bind-mount into
// containers, and whether it must be mounted read-only.
type Volume struct {
	HostPath string
	ReadOnly bool
}

// Manager sets up, refreshes and tears down pod volumes on this host.
type Manager struct {
	log *zap.Logger
	cfg Config

	mu    sync.Mutex
	locks map[types.UID]*podLock
}

type podLock struct {
	mu   sync.Mutex
	refs int
}

// New returns a Manager.
func New(log *zap.Logger, cfg Config) *Manager {
	return &Manager{log: log.Named("volumes"), cfg: cfg, locks: map[types.UID]*podLock{}}
}

// lock serializes operations on one pod.
func (m *Manager) lock(uid types.UID) func() {
	m.mu.Lock()
	l, ok := m.locks[uid]
	if !ok {
		l = &podLock{}
		m.locks[uid] = l
	}
	l.refs++
	m.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		m.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(m.locks, uid)
		}
		m.mu.Unlock()
	}
}

func (m *Manager) allocatable() corev1.ResourceList {
	if m.cfg.Allocatable == nil {
		return nil
	}
	return m.cfg.Allocatable()
}

// SetupPod prepares every volume of pod and returns them by volume name.
// It is idempotent: calling it again for a set-up pod refreshes the
// contents of configMap/secret/downwardAPI/projected volumes. On error the
// volumes set up so far stay; retry SetupPod or call TeardownPod.
func (m *Manager) SetupPod(ctx context.Context, pod *corev1.Pod, src Sources) (map[string]Volume, error) {
	if pod.UID == "" {
		return nil, fmt.Errorf("pod %s/%s has no uid", pod.Namespace, pod.Name)
	}
	defer m.lock(pod.UID)()
	if err := os.MkdirAll(m.volumesDir(pod.UID), 0o750); err != nil {
		return nil, fmt.Errorf("create volumes dir of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	out := make(map[string]Volume, len(pod.Spec.Volumes))
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		vol, err := m.setupVolume(ctx, pod, v, src)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s volume %q: %w", pod.Namespace, pod.Name, v.Name, err)
		}
		out[v.Name] = vol
	}
	return out, nil
}

func (m *Manager) setupVolume(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, src Sources) (Volume, error) {
	switch {
	case v.EmptyDir != nil:
		return m.setupEmptyDir(pod, v)
	case v.HostPath != nil:
		return setupHostPath(v.HostPath)
	case v.PersistentVolumeClaim != nil:
		return m.setupClaim(ctx, pod, v.PersistentVolumeClaim)
	case v.Image != nil:
		return m.setupImage(ctx, pod, v)
	}
	kind, ok := atomicKindOf(v)
	if !ok {
		return Volume{}, fmt.Errorf("%w: %s", ErrUnsupported, volumeType(v))
	}
	return m.setupAtomic(ctx, pod, v, kind, src)
}

// UpdatePod rewrites the configMap/secret/downwardAPI/projected volumes of
// a set-up pod whose contents changed, atomically; unchanged volumes and
// volumes not set up yet are left alone.
func (m *Manager) UpdatePod(ctx context.Context, pod *corev1.Pod, src Sources) error {
	defer m.lock(pod.UID)()
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		kind, ok := atomicKindOf(v)
		if !ok {
			continue
		}
		dir := m.volumeDir(pod.UID, kind.plugin, v.Name)
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, err := m.setupAtomic(ctx, pod, v, kind, src); err != nil {
			errs = append(errs, fmt.Errorf("pod %s/%s volume %q: %w", pod.Namespace, pod.Name, v.Name, err))
		}
	}
	return errors.Join(errs...)
}

// TeardownPod unmounts everything under the pod's directory and removes
// it (the whole <PodsDir>/<uid>). Idempotent; a missing pod is success.
func (m *Manager) TeardownPod(ctx context.Context, uid types.UID) error {
	if uid == "" {
		return fmt.Errorf("teardown: empty pod uid")
	}
	defer m.lock(uid)()
	dir := m.podDir(uid)
	if err := unmountAll(dir); err != nil {
		return fmt.Errorf("teardown pod %s: %w", uid, err)
	}
	left, err := mountsUnder(dir)
	if err != nil {
		return fmt.Errorf("teardown pod %s: %w", uid, err)
	}
	if len(left) > 0 { // never recurse into a live mount
		return fmt.Errorf("teardown pod %s: still mounted: %v", uid, left)
	}
	if m.cfg.Images != nil {
		if err := m.cfg.Images.ReleaseImages(ctx, uid); err != nil {
			return fmt.Errorf("teardown pod %s: %w", uid, err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("teardown pod %s: %w", uid, err)
	}
	m.log.Debug("pod volumes torn down", zap.String("uid", string(uid)))
	return nil
}

// PodUIDs lists the pods that have a directory under PodsDir, for garbage
// collection of orphans.
func (m *Manager) PodUIDs() ([]types.UID, error) {
	entries, err := os.ReadDir(m.cfg.PodsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", m.cfg.PodsDir, err)
	}
	var out []types.UID
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, types.UID(e.Name()))
		}
	}
	return out, nil
}

// volumeType names the set source field of v ("persistentVolumeClaim").
func volumeType(v *corev1.Volume) string { return setField(v.VolumeSource) }
