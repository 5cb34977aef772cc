package cgroups

import (
	"fmt"
	"path"
	"reflect"
	"sync"

	cgroups "github.com/containerd/cgroups/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/agent/qos"
)

// Manager creates and removes the QoS tiers and pod cgroups. It is safe for
// concurrent use.
type Manager struct {
	log *zap.Logger
	cfg Config
	be  backend

	mu sync.Mutex
	// burstable holds the cpu requests (millicores) of the Burstable pods
	// placed by this Manager; their sum sets the burstable tier's shares.
	burstable map[types.UID]int64
	// written is what ensurePod last wrote to each pod cgroup: a pod synced
	// again with the same resources costs a stat instead of a rewrite of
	// every value (and, on v1, a read of mountinfo).
	written map[string]Resources
	// clampLogged is set once the first oom_score_adj clamp was logged at
	// info level.
	clampLogged bool
}

// New detects the cgroup version (unless cfg.Version forces one) and returns
// a Manager. It changes nothing on the host.
func New(log *zap.Logger, cfg Config) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Version == 0 {
		cfg.Version, err = detectVersion()
		if err != nil {
			return nil, err
		}
	}
	var be backend
	if cfg.Version == 2 {
		be, err = newV2(cfg.Mountpoint)
	} else {
		be, err = newV1()
	}
	if err != nil {
		return nil, err
	}
	log = log.Named("cgroups")
	log.Info("cgroup manager", zap.Int("version", cfg.Version), zap.String("root", "/"+cfg.Root))
	return &Manager{log: log, cfg: cfg, be: be, burstable: map[types.UID]int64{}, written: map[string]Resources{}}, nil
}

// detectVersion maps containerd's Mode: unified is v2; legacy and hybrid
// (v1 controllers, an empty v2 tree beside them) are v1, as runc does.
func detectVersion() (int, error) {
	switch cgroups.Mode() {
	case cgroups.Unified:
		return 2, nil
	case cgroups.Legacy, cgroups.Hybrid:
		return 1, nil
	default:
		return 0, fmt.Errorf("no cgroup filesystem mounted at %s", DefaultMountpoint)
	}
}

// Version is the cgroup version in use (1 or 2).
func (m *Manager) Version() int { return m.be.version() }

// EnsureQoSTiers creates /<root>, /<root>/kubepods (cpu shares and memory
// limit from node allocatable), kubepods/burstable (shares from the Burstable
// pods' requests) and kubepods/besteffort (2 shares). Idempotent.
func (m *Manager) EnsureQoSTiers() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	steps := []struct {
		group string
		r     Resources
	}{
		{"/" + m.cfg.Root, Resources{}},
		{m.KubepodsPath(), NodeResources(m.cfg.NodeAllocatable)},
		{m.TierPath(corev1.PodQOSBurstable), m.burstableTier()},
		{m.TierPath(corev1.PodQOSBestEffort), Resources{CPUShares: ptr(uint64(qos.MinShares))}},
	}
	for _, s := range steps {
		if err := m.be.ensure(s.group, s.r); err != nil {
			return fmt.Errorf("ensure QoS tier: %w", err)
		}
	}
	m.log.Debug("QoS tiers ready", zap.String("kubepods", m.KubepodsPath()))
	return nil
}

// burstableTier is the burstable tier's configuration: shares for the sum of
// the Burstable pods' cpu requests (kubelet's setCPUCgroupConfig).
func (m *Manager) burstableTier() Resources {
	var milli int64
	for _, v := range m.burstable {
		milli += v
	}
	return Resources{CPUShares: ptr(qos.CPUShares(milli))}
}

// EnsurePod creates (or updates) the pod's cgroup under its QoS tier and
// returns its absolute path, the cgroup parent of the pod's containers
// (see ContainerCgroupsPath). EnsureQoSTiers must have run.
func (m *Manager) EnsurePod(pod *corev1.Pod) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ensurePod(pod)
}

// UpdatePod reapplies the pod's resources to its existing cgroup, e.g. after
// the burstable tier or the pod changed; ErrNotFound when it has none.
func (m *Manager) UpdatePod(pod *corev1.Pod) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	class := qos.Class(pod)
	if !m.be.exists(m.PodPath(class, pod.UID)) {
		return "", fmt.Errorf("pod %s/%s (%s): %w", pod.Namespace, pod.Name, pod.UID, ErrNotFound)
	}
	return m.ensurePod(pod)
}

func (m *Manager) ensurePod(pod *corev1.Pod) (string, error) {
	if pod.UID == "" || path.Base(string(pod.UID)) != string(pod.UID) {
		return "", fmt.Errorf("pod %s/%s: invalid uid %q", pod.Namespace, pod.Name, pod.UID)
	}
	class := qos.Class(pod)
	group := m.PodPath(class, pod.UID)
	if class == corev1.PodQOSBurstable {
		if err := m.setBurstable(pod.UID, qos.MilliCPU(qos.PodRequests(pod))); err != nil {
			return "", err
		}
	}
	want := PodResources(pod, m.cfg.PodPidsLimit)
	if old, ok := m.written[group]; ok && reflect.DeepEqual(old, want) && m.be.exists(group) {
		return group, nil
	}
	delete(m.written, group)
	if err := m.be.ensure(group, want); err != nil {
		return "", fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	m.written[group] = want
	m.log.Debug("pod cgroup ready", zap.String("pod", pod.Namespace+"/"+pod.Name),
		zap.String("qos", string(class)), zap.String("cgroup", group))
	return group, nil
}

// setBurstable records a Burstable pod's cpu request (or forgets it when
// milli < 0) and rewrites the tier's shares when the sum changed. The tier
// grows before a new pod's cgroup is made, as kubelet does.
func (m *Manager) setBurstable(uid types.UID, milli int64) error {
	old, had := m.burstable[uid]
	switch {
	case milli < 0 && !had, milli >= 0 && had && old == milli:
		return nil
	case milli < 0:
		delete(m.burstable, uid)
	default:
		m.burstable[uid] = milli
	}
	if err := m.be.ensure(m.TierPath(corev1.PodQOSBurstable), m.burstableTier()); err != nil {
		return fmt.Errorf("update burstable tier: %w", err)
	}
	return nil
}
