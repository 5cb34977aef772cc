package prober

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// initialResults are kubelet's results before a probe has decided anything.
var initialResults = [numKinds]Result{Liveness: Success, Readiness: Failure, Startup: Unknown}

// setContainerLocked makes container c of ps run as id (or not run, "").
func (m *Manager) setContainerLocked(ps *podState, c *v1.Container, id string, startedAt time.Time) {
	old := ps.containers[c.Name]
	if old != nil && old.id == id {
		return // a container's spec does not change while it runs
	}
	if old != nil {
		old.cancel()
		delete(ps.containers, c.Name)
	}
	if id == "" {
		return
	}
	if startedAt.IsZero() {
		startedAt = m.clock.Now()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cs := &containerState{
		uid: ps.pod.UID, name: c.Name, id: id, spec: c, startedAt: startedAt,
		probes:  [numKinds]*v1.Probe{Liveness: c.LivenessProbe, Readiness: c.ReadinessProbe, Startup: c.StartupProbe},
		results: initialResults,
		started: make(chan struct{}),
		ctx:     ctx, cancel: cancel,
	}
	if c.StartupProbe == nil {
		cs.markStarted()
	}
	ps.containers[c.Name] = cs
	if ps.pod.DeletionTimestamp != nil {
		m.terminatingLocked(ps)
	}
	for k := Kind(0); k < numKinds; k++ {
		if cs.probes[k] != nil {
			w := &worker{m: m, cs: cs, kind: k, probe: cs.probes[k]}
			m.wg.Add(1)
			go w.run()
		}
	}
}

// terminatingLocked applies kubelet's graceful-shutdown rule: a terminating
// pod's containers are no longer killed for liveness or startup failures
// (both read Success and their workers stop); readiness keeps probing.
func (m *Manager) terminatingLocked(ps *podState) {
	for _, cs := range ps.containers {
		cs.results[Liveness] = Success
		if cs.probes[Startup] != nil && cs.results[Startup] != Success {
			cs.results[Startup] = Success
			cs.markStarted()
		}
	}
}

// current returns the state of pod uid's container name, if running.
func (m *Manager) currentLocked(uid types.UID, name string) (*podState, *containerState) {
	ps, ok := m.pods[uid]
	if !ok {
		return nil, nil
	}
	return ps, ps.containers[name]
}

// setResult records a result that passed its threshold and reports it on
// Updates when it changed. A stale worker (its container replaced) is ignored.
// A startup success releases the other probes only after its update is
// sent, so the loop sees Startup Success before their results.
func (m *Manager) setResult(cs *containerState, k Kind, r Result, msg string) {
	m.mu.Lock()
	_, cur := m.currentLocked(cs.uid, cs.name)
	if cur != cs || cs.results[k] == r {
		m.mu.Unlock()
		return
	}
	cs.results[k] = r
	m.mu.Unlock()
	u := Update{PodUID: cs.uid, Container: cs.name, ContainerID: cs.id, Probe: k, Result: r, Message: msg}
	select {
	case m.updates <- u:
	case <-cs.ctx.Done():
	}
	if k == Startup && r == Success {
		cs.markStarted()
	}
}

// startedLocked is kubelet's Started: running, and the startup probe (if
// any) succeeded.
func startedLocked(cs *containerState) bool {
	return cs != nil && (cs.probes[Startup] == nil || cs.results[Startup] == Success)
}

// Started says whether the container runs and has passed its startup probe
// (or has none) — the container status' started field.
func (m *Manager) Started(uid types.UID, container string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, cs := m.currentLocked(uid, container)
	return startedLocked(cs)
}

// Readiness says whether the container is ready: started, and its readiness
// probe succeeded (a container without one is ready once started).
func (m *Manager) Readiness(uid types.UID, container string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, cs := m.currentLocked(uid, container)
	if !startedLocked(cs) {
		return false
	}
	return cs.probes[Readiness] == nil || cs.results[Readiness] == Success
}

// Result is the current result of one probe of a running container; Unknown
// when the container is not running or has no such probe.
func (m *Manager) Result(uid types.UID, container string, k Kind) Result {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, cs := m.currentLocked(uid, container)
	if cs == nil || k < 0 || k >= numKinds || cs.probes[k] == nil {
		return Unknown
	}
	return cs.results[k]
}

// isTerminating says whether cs's pod is being deleted.
func (m *Manager) isTerminating(cs *containerState) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	ps, _ := m.currentLocked(cs.uid, cs.name)
	return ps != nil && ps.pod.DeletionTimestamp != nil
}

// podAndIP returns the latest pod object and IP of cs.
func (m *Manager) podAndIP(cs *containerState) (*v1.Pod, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ps, _ := m.currentLocked(cs.uid, cs.name)
	if ps == nil {
		return nil, ""
	}
	return ps.pod, ps.ip
}

// ContainerID is the ID of the container the Manager probes for pod uid's
// container, "" when it knows of none running.
func (m *Manager) ContainerID(uid types.UID, container string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, cs := m.currentLocked(uid, container); cs != nil {
		return cs.id
	}
	return ""
}
