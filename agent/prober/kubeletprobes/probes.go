package kubeletprobes

import (
	"github.com/orch/orch/agent/prober"
	"github.com/orch/orch/agent/runtime"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Probes is the pod loop's view of a prober.Manager.
type Probes struct{ m *prober.Manager }

// New adapts m.
func New(m *prober.Manager) *Probes { return &Probes{m: m} }

// SyncPod tells the prober the pod's IP and running containers by name;
// their StartedAt times the initial delays.
func (p *Probes) SyncPod(pod *corev1.Pod, podIP string, running map[string]runtime.ContainerStatus) {
	r := make(map[string]prober.Running, len(running))
	for name, c := range running {
		r[name] = prober.Running{ID: c.ID, StartedAt: c.StartedAt}
	}
	p.m.SyncPod(pod, podIP, r)
}

// RemovePod stops the pod's probes.
func (p *Probes) RemovePod(uid types.UID) { p.m.RemovePod(uid) }

// Ready reports whether container id is started and ready.
func (p *Probes) Ready(uid types.UID, container, id string) bool {
	return p.m.ContainerID(uid, container) == id && p.m.Readiness(uid, container)
}

// Started reports whether container id passed its startup probe (or has none).
func (p *Probes) Started(uid types.UID, container, id string) bool {
	return p.m.ContainerID(uid, container) == id && p.m.Started(uid, container)
}

// LivenessFailed reports that container id failed its liveness or startup
// probe (which one is the Kind) and must be killed; prober.KillMessage has
// kubelet's event text.
func (p *Probes) LivenessFailed(uid types.UID, container, id string) (prober.Kind, bool) {
	if p.m.ContainerID(uid, container) != id {
		return 0, false
	}
	for _, k := range []prober.Kind{prober.Liveness, prober.Startup} {
		if p.m.Result(uid, container, k) == prober.Failure {
			return k, true
		}
	}
	return 0, false
}

// Updates delivers the Manager's result changes.
func (p *Probes) Updates() <-chan prober.Update { return p.m.Updates() }
